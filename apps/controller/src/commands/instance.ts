import { positional } from '@heddle/cli-kit';
import type { JsonValue } from '@heddle/envelope';
// The API's placement (what the client answers), named as the command help names it.
import type { Placement as PlacementRecord } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import { intFlag } from '../command-def.js';
import { START, STOP, UNLOAD } from '../defs/instances.js';
import { type Paint, paintState } from '../format/colour.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';

function done(verb: string, p: PlacementRecord, paint: Paint): string {
  return `${verb} ${p.instance_id} (${p.workload}@${p.version} on ${p.node_id}): ${paintState(paint, p.state)}`;
}

/** The node's stop evidence in one line: how it ended (exit code, signal, killed, notes), else its JSON. */
export function evidenceText(e: JsonValue): string {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return JSON.stringify(e);
  const parts: string[] = [];
  for (const k of ['exit_code', 'signal', 'killed'] as const) {
    if (k in e) parts.push(`${k.replace('_', ' ')} ${JSON.stringify(e[k])}`);
  }
  const notes = e.notes;
  if (Array.isArray(notes) && notes.length > 0) parts.push(notes.map((n) => String(n)).join('; '));
  return parts.length === 0 ? JSON.stringify(e) : parts.join(', ');
}

/** `heddle start <instance>`. */
export function start(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(START, args, io, async (ctx) => {
    const placement = await ctx.client().start(positional(ctx.parsed, 0));
    ctx.emit({ placement }, () => [done('started', placement, ctx.paint)]);
    return ExitCode.ok;
  });
}

/** `heddle stop <instance> [--grace-ms N]`. */
export function stop(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(STOP, args, io, async (ctx) => {
    const grace = intFlag('grace-ms', ctx.parsed.strings['grace-ms'], 0, 600_000);
    const answer = await ctx.client().stop(positional(ctx.parsed, 0), grace);
    ctx.emit(answer, () => [
      done('stopped', answer.placement, ctx.paint),
      ...(answer.evidence === null ? [] : [`evidence: ${evidenceText(answer.evidence)}`]),
    ]);
    return ExitCode.ok;
  });
}

/** `heddle unload <instance>`. */
export function unload(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(UNLOAD, args, io, async (ctx) => {
    const placement = await ctx.client().unload(positional(ctx.parsed, 0));
    ctx.emit({ placement }, () => [done('unloaded', placement, ctx.paint)]);
    return ExitCode.ok;
  });
}
