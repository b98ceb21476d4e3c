// The API's placement (what the client answers), named as the command help names it.
import type { Placement as PlacementRecord } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import { PS } from '../defs/instances.js';
import { type Paint, paintState } from '../format/colour.js';
import { age, shortId } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

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
