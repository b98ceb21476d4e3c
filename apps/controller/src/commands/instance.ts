// The API's placement (what the client answers), named as the command help names it.

import type { JsonValue } from '@heddle/envelope';
import type { Placement as PlacementRecord } from '@heddle/operator-api';
import { ExitCode } from '../cli-error.js';
import { type CommandDef, intFlag } from '../command-def.js';
import { type Paint, paintState } from '../format/colour.js';
import type { CliIo } from '../io.js';
import { runOperator } from '../operator.js';
import { INSTANCE_EXITS } from './status.js';

const INSTANCE_ARG = [{ name: 'instance', description: 'the instance id (see heddle ps)' }] as const;

/** `heddle start`. */
export const START: CommandDef = {
  name: 'start',
  summary: 'start a placed instance',
  description:
    'Sends `workload.start` to the instance’s node with a chained controller decision, and records that the operator wants it running.',
  positionals: INSTANCE_ARG,
  flags: [],
  json: '{"placement": PlacementRecord}',
  exits: INSTANCE_EXITS,
};

/** `heddle stop`. */
export const STOP: CommandDef = {
  name: 'stop',
  summary: 'stop a running instance',
  description:
    'Sends `workload.stop` to the instance’s node with a chained controller decision (the node stops it gracefully within --grace-ms, then forcibly) and prints the node’s evidence.',
  positionals: INSTANCE_ARG,
  flags: [
    {
      name: 'grace-ms',
      kind: 'string',
      value: 'N',
      description: 'how long the instance may take to stop on its own, in ms (0..600000)',
    },
  ],
  json: '{"placement": PlacementRecord, "evidence": <the node’s stop evidence>}',
  exits: INSTANCE_EXITS,
};

/** `heddle unload`. */
export const UNLOAD: CommandDef = {
  name: 'unload',
  summary: 'unload an instance from its node and release its reservation',
  description:
    'Sends `workload.unload` to the instance’s node with a chained controller decision. The controller keeps the record as `unloaded` (heddle ps --all shows it).',
  positionals: INSTANCE_ARG,
  flags: [],
  json: '{"placement": PlacementRecord}',
  exits: INSTANCE_EXITS,
};

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
    const placement = await ctx.client().start(ctx.parsed.positionals[0] as string);
    ctx.emit({ placement }, () => [done('started', placement, ctx.paint)]);
    return ExitCode.ok;
  });
}

/** `heddle stop <instance> [--grace-ms N]`. */
export function stop(args: readonly string[], io: CliIo): Promise<number> {
  return runOperator(STOP, args, io, async (ctx) => {
    const grace = intFlag('grace-ms', ctx.parsed.strings['grace-ms'], 0, 600_000);
    const answer = await ctx.client().stop(ctx.parsed.positionals[0] as string, grace);
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
    const placement = await ctx.client().unload(ctx.parsed.positionals[0] as string);
    ctx.emit({ placement }, () => [done('unloaded', placement, ctx.paint)]);
    return ExitCode.ok;
  });
}
