// The API's placement (what the client answers), named as the command help names it.
import type { Placement as PlacementRecord } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import type { CommandDef } from '../command-def.js';
import { type Paint, paintState } from '../format/colour.js';
import { age, shortId } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

/** `heddle ps`. */
export const PS: CommandDef = {
  name: 'ps',
  summary: 'list the placed instances',
  description:
    'One row per instance the controller placed: INSTANCE, WORKLOAD (id@version), NODE (the first 8 characters of its id), STATE (as the controller last knew it: placed, running, stopped, failed, lost, unloaded), DESIRED (running or stopped, as the operator last asked) and AGE (since it was placed). Unloaded instances are hidden unless --all.',
  positionals: [],
  flags: [{ name: 'all', kind: 'boolean', description: 'include unloaded instances' }],
  json: '{"instances": PlacementRecord[]} (unloaded ones only with --all)',
  exits: {
    0: 'listed',
    1: 'the controller is not running',
    2: 'usage error',
    3: 'bad input (unauthorized)',
    4: 'internal error',
  },
};

/** `heddle ps [--all]`. */
export function ps(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(PS, args, io, async (ctx) => {
    const all = await ctx.client().instances();
    const instances = ctx.parsed.booleans.all === true ? all : all.filter((p) => p.state !== 'unloaded');
    ctx.emit({ instances }, () => psTable(instances, ctx.paint, ctx.now(), all.length - instances.length));
    return ExitCode.ok;
  });
}

/** The `ps` table; `hidden` unloaded instances are counted under it. */
export function psTable(
  instances: readonly PlacementRecord[],
  paint: Paint,
  now: number,
  hidden = 0,
): string[] {
  const note = hidden > 0 ? [`(${hidden} unloaded hidden; heddle ps --all shows them)`] : [];
  if (instances.length === 0) return ['no instances (place one with heddle place <package-dir>)', ...note];
  const rows = instances.map((p) => [
    p.instance_id,
    `${p.workload}@${p.version}`,
    shortId(p.node_id),
    paintState(paint, p.state),
    p.desired_running ? 'running' : 'stopped',
    age(p.placed_at_ms, now),
  ]);
  return [...table(['INSTANCE', 'WORKLOAD', 'NODE', 'STATE', 'DESIRED', 'AGE'], rows), ...note];
}
