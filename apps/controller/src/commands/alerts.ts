import type { AlertRecord } from '@heddle/control-plane';
import { ExitCode, usageError } from '../cli-error.js';
import type { CommandDef } from '../command-def.js';
import type { Paint } from '../format/colour.js';
import { age, shortId } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

const EXITS: Readonly<Record<number, string>> = {
  0: 'done',
  1: 'the controller is not running',
  2: 'usage error',
  3: 'bad input: unknown_alert (see heddle alerts --all), unauthorized',
  4: 'internal error',
};

/** `heddle alerts`. */
export const ALERTS_LS: CommandDef = {
  name: 'alerts',
  summary: 'list the alerts: lost instances the controller did not move',
  description:
    'One row per alert (docs/lifecycle.md): ALERT, REASON (pinned: its order names a node; not_migratable: a Seed store cog or an order placed with --no-migrate; reschedule_limit: its lineage was rescheduled the most times allowed; no_order), INSTANCE, NODE and AGE, then the detail. Each is raised once per instance and reason, and chained as workload.alert. Acknowledged alerts are hidden unless --all.',
  positionals: [],
  flags: [{ name: 'all', kind: 'boolean', description: 'include acknowledged alerts' }],
  json: '{"alerts": AlertRecord[]} (acknowledged ones only with --all)',
  exits: EXITS,
};

/** `heddle alerts ack`. */
export const ALERTS_ACK: CommandDef = {
  name: 'alerts ack',
  summary: 'acknowledge an alert (it is then hidden from heddle alerts)',
  description:
    'Marks the alert acknowledged (chained as workload.alert, phase acknowledged). Nothing else changes: the instance stays lost until its node returns, or until it is placed again by hand.',
  positionals: [{ name: 'alert', description: 'the alert id (see heddle alerts)' }],
  flags: [],
  json: '{"alert": AlertRecord}',
  exits: EXITS,
};

/** The definitions of `heddle alerts ...`. */
export const ALERTS_DEFS: readonly CommandDef[] = [ALERTS_LS, ALERTS_ACK];

/** `heddle alerts [--all]` and `heddle alerts ack <id>`. */
export function alerts(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'ack') {
    return runOperator(ALERTS_ACK, rest, io, async (ctx) => {
      const [id] = ctx.parsed.positionals as [string];
      const alert = await ctx.client().ackAlert(id);
      ctx.emit({ alert }, () => [`acknowledged ${alert.alert_id} (${alert.reason}, ${alert.instance_id})`]);
      return ExitCode.ok;
    });
  }
  if (sub !== undefined && !sub.startsWith('-')) {
    throw usageError(
      `heddle alerts: unknown subcommand ${JSON.stringify(sub)}\nusage: heddle alerts [--all] | heddle alerts ack <id>`,
    );
  }
  return runOperator(ALERTS_LS, args, io, async (ctx) => {
    const all = ctx.parsed.booleans.all === true;
    const list = await ctx.client().alerts({ unacknowledged: !all });
    ctx.emit({ alerts: list }, () => alertTable(list, ctx.paint, ctx.now()));
    return ExitCode.ok;
  });
}

/** The `alerts` table, each alert's detail on the line below it. */
export function alertTable(list: readonly AlertRecord[], paint: Paint, now: number): string[] {
  if (list.length === 0) return ['no alerts'];
  const rows = list.map((a) => [
    a.alert_id,
    paint('red', a.reason),
    a.instance_id,
    shortId(a.node_id),
    `${age(a.raised_at_ms, now)}${a.acked_at_ms === null ? '' : ' (acknowledged)'}`,
  ]);
  const lines = table(['ALERT', 'REASON', 'INSTANCE', 'NODE', 'AGE'], rows);
  const out = [lines[0] as string];
  for (const [i, a] of list.entries()) out.push(lines[i + 1] as string, `  ${a.detail}`);
  return out;
}
