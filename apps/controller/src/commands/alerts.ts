import { positional } from '@heddle/cli-kit';
import type { AlertRecord } from '@heddle/control-plane';
import { ExitCode, usageError } from '../cli-error.js';
import { ALERTS_ACK, ALERTS_LS } from '../defs/instances.js';
import type { Paint } from '../format/colour.js';
import { age, shortId } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

/** `heddle alerts [--all]` and `heddle alerts ack <id>`. */
export function alerts(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'ack') {
    return runOperator(ALERTS_ACK, rest, io, async (ctx) => {
      const id = positional(ctx.parsed, 0);
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
  const out = [lines[0] ?? ''];
  for (const [i, a] of list.entries()) out.push(lines[i + 1] ?? '', `  ${a.detail}`);
  return out;
}
