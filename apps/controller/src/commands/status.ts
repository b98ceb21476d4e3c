// The API's placement (what the client answers), named as the command help names it.

import type { JsonValue } from '@heddle/envelope';
import type { Placement as PlacementRecord } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import type { CommandDef } from '../command-def.js';
import { type Paint, paintState } from '../format/colour.js';
import { age } from '../format/duration.js';
import { keyValues } from '../format/table.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

/** Exit codes of the commands that act on one instance. */
export const INSTANCE_EXITS: Readonly<Record<number, string>> = {
  0: 'done',
  1: 'the node refused, could not be reached or gave no valid answer (refused, unreachable, indeterminate), or the controller is not running',
  2: 'usage error',
  3: 'bad input: unknown_instance (see heddle ps), invalid_input naming the field, unauthorized',
  4: 'internal error',
};

/** `heddle status`. */
export const STATUS: CommandDef = {
  name: 'status',
  summary: 'show one instance: the controller’s placement and the host’s own view',
  description:
    'Asks the instance’s node for its status (the controller’s record is updated from the answer) and prints the placement (workload, node, variant, runtime, state, the decision and order that placed it, the package) followed by the host’s view as `host.<field>` lines.',
  positionals: [{ name: 'instance', description: 'the instance id (see heddle ps)' }],
  flags: [],
  json: '{"placement": PlacementRecord, "node": <the host’s instance view>}',
  exits: INSTANCE_EXITS,
};

/** `heddle status <instance>`. */
export function status(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(STATUS, args, io, async (ctx) => {
    const [id] = ctx.parsed.positionals as [string];
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
    for (const [k, x] of entries) flatten(`${prefix}.${k}`, x as JsonValue, out, paint);
    return;
  }
  if (typeof v === 'string') out.push([prefix, prefix.endsWith('.state') ? paintState(paint, v) : v]);
  else out.push([prefix, JSON.stringify(v)]);
}
