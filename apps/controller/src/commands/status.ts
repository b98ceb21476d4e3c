import { positional } from '@heddle/cli-kit';
import type { JsonValue } from '@heddle/envelope';
// The API's placement (what the client answers), named as the command help names it.
import type { Placement as PlacementRecord } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import { STATUS } from '../defs/instances.js';
import { type Paint, paintState } from '../format/colour.js';
import { age } from '../format/duration.js';
import { keyValues } from '../format/table.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

/** `heddle status <instance>`. */
export function status(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(STATUS, args, io, async (ctx) => {
    const id = positional(ctx.parsed, 0);
    const answer = await ctx.client().instance(id);
    ctx.emit(answer, () => statusLines(answer.placement, answer.node, ctx.paint, ctx.now()));
    return ExitCode.ok;
  });
}

function when(ms: number, now: number): string {
  return `${new Date(ms).toISOString()} (${age(ms, now)} ago)`;
}

/** The key/value lines of `status`: the placement, then the host's view flattened as `host.<field>`. */
export function statusLines(p: PlacementRecord, host: JsonValue, paint: Paint, now: number): string[] {
  const pairs: [string, string][] = [
    ['instance', p.instance_id],
    ['workload', `${p.workload}@${p.version}`],
    ['node', p.node_id],
    ['variant', p.variant],
    ['runtime', p.runtime],
    ['state', paintState(paint, p.state)],
    ['desired', p.desired_running ? 'running' : 'stopped'],
    ['placed', when(p.placed_at_ms, now)],
    ['updated', when(p.updated_at_ms, now)],
    ['order', p.order_id],
    ['decision', p.decision_id],
    ['package', p.package_id],
    ['manifest', p.manifest_hash],
  ];
  flatten('host', host, pairs, paint);
  return keyValues(pairs);
}

function flatten(prefix: string, v: JsonValue, out: [string, string][], paint: Paint): void {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const entries = Object.entries(v);
    if (entries.length === 0) out.push([prefix, '{}']);
    // cast: Object.entries of a JsonObject types its values unknown; they are JSON values
    for (const [k, x] of entries) flatten(`${prefix}.${k}`, x as JsonValue, out, paint);
    return;
  }
  if (typeof v === 'string') out.push([prefix, prefix.endsWith('.state') ? paintState(paint, v) : v]);
  else out.push([prefix, JSON.stringify(v)]);
}
