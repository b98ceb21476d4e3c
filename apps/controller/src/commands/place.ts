import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { positional } from '@heddle/cli-kit';
import { IDEMPOTENCY_KEY_PATTERN, type PlaceOrderInput } from '@heddle/control-plane';
import { ApiError, type ExplanationAnswer, type PlaceAnswer } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import { badValue } from '../command-def.js';
import { PLACE } from '../defs/instances.js';
import { type Paint, paintState } from '../format/colour.js';
import { progressFor } from '../format/progress.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { type OperatorContext, printError, runOperator } from '../operator.js';
import { approvalLines } from './approvals.js';

type Mode = NonNullable<PlaceOrderInput['mode']>;
type ConfigValue = string | number | boolean | null;

/** Parses `--mode`: `once`, `listener` or `interval:N` (N seconds, 1..86400); refused naming `mode`. */
export function parseMode(text: string): Mode {
  if (text === 'once' || text === 'listener') return { type: text };
  const m = /^interval:(\d{1,5})$/.exec(text);
  const secs = m === null ? Number.NaN : Number(m[1]);
  if (!Number.isInteger(secs) || secs < 1 || secs > 86_400) {
    throw badValue(
      'mode',
      `--mode: ${JSON.stringify(text)} is not once, listener or interval:N with N seconds in 1..86400`,
    );
  }
  return { type: 'interval', secs };
}

const CONFIG_KEY = /^[a-z][a-z0-9_]{0,63}$/;
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** Types one `--set` value: `true`, `false`, `null`, a JSON number, a JSON string in quotes, else the text. */
export function configValue(key: string, text: string): ConfigValue {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (JSON_NUMBER.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  if (text.startsWith('"')) {
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v === 'string') return v;
    } catch {
      // refused below
    }
    throw badValue(`values.${key}`, `--set ${key}: ${text} starts with a quote but is not a JSON string`);
  }
  if (text.length > 4096) throw badValue(`values.${key}`, `--set ${key}: longer than 4096 characters`);
  return text;
}

/** Parses every `--set key=value` strictly: a key is a config field name, given once. */
export function parseSets(sets: readonly string[]): Record<string, ConfigValue> {
  const values: Record<string, ConfigValue> = {};
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq < 0) throw badValue('set', `--set: ${JSON.stringify(s)} is not key=value`);
    const key = s.slice(0, eq);
    if (!CONFIG_KEY.test(key)) {
      throw badValue(
        `values.${key}`,
        `--set: ${JSON.stringify(key)} is not a config field name (a lower-case letter, then letters, digits and _)`,
      );
    }
    if (Object.hasOwn(values, key)) throw badValue(`values.${key}`, `--set: ${key} is given twice`);
    values[key] = configValue(key, s.slice(eq + 1));
  }
  return values;
}

const NODE_ID = /^[0-9a-f]{32}$/;

function nodeIds(flag: string, ids: readonly string[]): string[] {
  for (const id of ids) {
    if (!NODE_ID.test(id)) {
      throw badValue(
        flag,
        `--${flag}: ${JSON.stringify(id)} is not a node id (32 lower-case hex; see heddle node ls)`,
      );
    }
  }
  return [...ids];
}

/** The order `heddle place` sends, from its parsed arguments. */
export function orderOf(ctx: Pick<OperatorContext, 'parsed' | 'io'>): PlaceOrderInput {
  const { strings, booleans, lists } = ctx.parsed;
  const node = strings.node === undefined ? undefined : nodeIds('node', [strings.node])[0];
  const prefer = nodeIds('prefer', lists.prefer ?? []);
  const avoid = nodeIds('avoid', lists.avoid ?? []);
  const values = parseSets(lists.set ?? []);
  const target = positional(ctx.parsed, 0);
  const store = /^store:([a-z0-9][a-z0-9._-]{0,63})@([0-9A-Za-z.+-]{1,64})$/.exec(target);
  if (target.startsWith('store:') && store === null) {
    throw badValue('package-dir', `${JSON.stringify(target)}: expected store:<id>@<version>`);
  }
  const key = strings['idempotency-key'] ?? `cli-${randomBytes(12).toString('hex')}`;
  if (!IDEMPOTENCY_KEY_PATTERN.test(key))
    throw badValue('idempotency_key', '--idempotency-key: expected 1..128 characters of A-Z a-z 0-9 . _ : -');
  const sha256 = strings.sha256;
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256))
    throw badValue('sha256', 'expected 64 lower-case hex characters');
  return {
    ...(store === null
      ? { package_dir: resolve(ctx.io.cwd, target) }
      : {
          store_pin: {
            // cast: the store-pin pattern's two groups always take part in a match
            id: store[1] as string,
            version: store[2] as string,
            ...(sha256 === undefined ? {} : { sha256 }),
            console_commands: [...(lists.console ?? [])],
          },
        }),
    ...(node === undefined ? {} : { node }),
    ...(prefer.length === 0 ? {} : { prefer }),
    ...(avoid.length === 0 ? {} : { avoid }),
    ...(strings.mode === undefined ? {} : { mode: parseMode(strings.mode) }),
    ...(Object.keys(values).length === 0 ? {} : { values }),
    ...(booleans['no-start'] === true ? { start: false } : {}),
    ...(booleans['allow-emulated'] === true ? { allow_emulated: true } : {}),
    ...(booleans['no-migrate'] === true ? { migratable: false } : {}),
    ...(booleans['dry-run'] === true ? { dry_run: true } : { idempotency_key: key }),
  };
}

/** `heddle place <package-dir> ...`. */
export function place(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(PLACE, args, io, async (ctx) => {
    const order = orderOf(ctx);
    const bar = progressFor(io, ctx.parsed.booleans.json === true);
    let result: PlaceAnswer;
    try {
      result = await ctx
        .client()
        .place(
          order,
          bar === undefined || order.dry_run === true ? {} : { onProgress: (p) => bar.update(p) },
        );
    } catch (err) {
      if (err instanceof ApiError && err.code === 'outcome_unknown' && order.idempotency_key !== undefined) {
        throw new ApiError(
          'outcome_unknown',
          `${err.message}; run the same command with --idempotency-key ${order.idempotency_key} to learn what it did (it never places twice)`,
          { cause: err },
        );
      }
      throw err;
    } finally {
      bar?.done();
    }
    if (result.status === 'awaiting_approval' && ctx.parsed.booleans.wait === true) {
      return waitForApproval(ctx, result);
    }
    ctx.emit(result, () => placeLines(result, ctx.paint, ctx.parsed.booleans.explain === true));
    if (result.status === 'unsettled') {
      printError(io, 'place', ctx.parsed.booleans.json === true, {
        code: 'unsettled',
        message: `the answer of ${result.attempts.at(-1)?.node_id ?? 'the node'} was lost and is not settled yet (decision ${result.decision_id}); the controller settles it, check heddle ps before placing again`,
      });
      return ExitCode.checkFailed;
    }
    if (result.status === 'dry_run' && result.explanation.outcome !== 'placed') return ExitCode.checkFailed;
    return ExitCode.ok;
  });
}

/** The human lines of a place result. */
export function placeLines(r: PlaceAnswer, paint: Paint, withTable: boolean): string[] {
  const lines: string[] = [];
  if (r.replayed === true)
    lines.push(paint('dim', 'answered from an earlier place with the same idempotency key'));
  if (r.status === 'placed' && r.instance !== null) {
    const i = r.instance;
    lines.push(
      `${paint('green', 'placed')} ${i.workload}@${i.version} as ${paint('bold', i.instance_id)} on ${i.node_id} (${i.variant}, ${i.runtime}): ${paintState(paint, i.state)}`,
      `decision ${r.decision_id}, order ${r.order_id}`,
    );
  } else if (r.status === 'dry_run') {
    lines.push(`dry run: ${r.explanation.summary}`);
  } else if (r.status === 'awaiting_approval') {
    const id = r.approval_id ?? '-';
    lines.push(
      `${paint('yellow', 'awaiting approval')} ${paint('bold', id)}: the policy defers this place to an operator; it is held, nothing is placed yet`,
      `see it with 'heddle approvals show ${id}'; an operator approves it with 'heddle approvals approve ${id}' (or rejects it)`,
    );
  } else {
    lines.push(`${paint('yellow', 'unsettled')}: decision ${r.decision_id}, order ${r.order_id}`);
  }
  for (const a of r.attempts) {
    if (a.outcome === 'placed') continue;
    lines.push(
      `  tried ${a.node_id} (${a.variant}): ${paintState(paint, a.outcome)}${a.code === null ? '' : ` ${a.code}`}${a.reason === null ? '' : `: ${a.reason}`}`,
    );
  }
  const showTable = withTable || (r.status === 'dry_run' && r.explanation.outcome !== 'placed');
  if (showTable) {
    if (r.status !== 'dry_run') lines.push(r.explanation.summary);
    lines.push(...explainTable(r.explanation, paint));
  }
  return lines;
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** The engine's explanation as a table: NODE, VERDICT, VARIANT, SCORE, DETAIL (score parts or reasons). */
export function explainTable(x: ExplanationAnswer, paint: Paint): string[] {
  const rows = x.rows.map((r) => [
    r.node_id,
    paintState(paint, r.verdict),
    r.variant === undefined ? '-' : `${r.variant} (${r.execution ?? '-'})`,
    r.score === undefined ? '-' : fmt(r.score),
    r.parts !== undefined
      ? Object.entries(r.parts)
          .filter(([, v]) => v !== 0)
          .map(([k, v]) => `${k}=${fmt(v)}`)
          .join(' ')
      : (r.failures ?? []).map((f) => `${f.constraint}: ${f.detail}`).join('; '),
  ]);
  if (rows.length === 0) return ['(no nodes)'];
  return table(['NODE', 'VERDICT', 'VARIANT', 'SCORE', 'DETAIL'], rows);
}

/** How often `place --wait` asks whether the approval was decided. */
const APPROVAL_POLL_MS = 500;

/**
 * `place --wait` of a held place: prints that it awaits approval, then asks the controller until the
 * request is decided (or expires) and its place is done; prints the outcome (`--json`: the final
 * `{"approval": ApprovalView}`). Exit 0 when it was placed, 1 otherwise.
 */
async function waitForApproval(ctx: OperatorContext, held: PlaceAnswer): Promise<number> {
  const json = ctx.parsed.booleans.json === true;
  if (!json) for (const line of placeLines(held, ctx.paint, false)) ctx.io.out(line);
  const id = held.approval_id ?? '';
  const client = ctx.client();
  for (;;) {
    const approval = await client.approval(id);
    const place = approval.place;
    if (approval.state !== 'pending' && place?.status !== 'held') {
      ctx.emit({ approval }, () => approvalLines(approval, ctx.paint, ctx.now()));
      return place?.status === 'placed' ? ExitCode.ok : ExitCode.checkFailed;
    }
    await new Promise((r) => setTimeout(r, APPROVAL_POLL_MS));
  }
}
