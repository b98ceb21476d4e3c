import { z } from 'zod';
import { HollowError } from './errors.js';
import type { HollowFleet } from './fleet.js';

const Indices = z.strictObject({
  /** Host indices. */
  hosts: z.array(z.number().int().nonnegative()).max(20_000).optional(),
  /** A range of indices, `from` to `to` inclusive. */
  from: z.number().int().nonnegative().optional(),
  to: z.number().int().nonnegative().optional(),
});

/** One control line (JSON) read from standard input by `heddle-hollow run` (docs/hollow.md, "Control"). */
export const ControlCommandSchema = z.discriminatedUnion('cmd', [
  Indices.extend({ cmd: z.literal('kill') }),
  Indices.extend({ cmd: z.literal('revive') }),
  z.strictObject({ cmd: z.literal('stats') }),
  z.strictObject({ cmd: z.literal('hosts') }),
  z.strictObject({ cmd: z.literal('stop') }),
]);

/** A parsed control line. */
export type ControlCommand = z.infer<typeof ControlCommandSchema>;

/** Parses one control line; `invalid_command` naming the field for anything else. */
export function parseControlLine(line: string): ControlCommand {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new HollowError('invalid_command', 'a control line must be one JSON object', 'cmd');
  }
  const r = ControlCommandSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? 'cmd' : issue.path.join('.');
    throw new HollowError('invalid_command', `${field}: ${issue?.message ?? 'invalid'}`, field);
  }
  return r.data;
}

function indicesOf(c: z.infer<typeof Indices>): number[] {
  const out = [...(c.hosts ?? [])];
  if (c.from !== undefined || c.to !== undefined) {
    if (c.from === undefined || c.to === undefined || c.to < c.from) {
      throw new HollowError('invalid_command', 'from, to: give both, from <= to', 'from');
    }
    for (let i = c.from; i <= c.to; i++) out.push(i);
  }
  return out;
}

/**
 * Carries out one control command on `fleet` and returns the answer line's fields. `kill` and
 * `revive` answer once every host named is dead (or listening again), with the time it took.
 */
export async function runControl(fleet: HollowFleet, c: ControlCommand): Promise<Record<string, unknown>> {
  switch (c.cmd) {
    case 'kill':
    case 'revive': {
      const ids = indicesOf(c);
      for (const i of ids) fleet.host(i); // unknown_host before anything is done
      const t0 = performance.now();
      if (c.cmd === 'kill') await fleet.kill(ids);
      else await fleet.revive(ids);
      return {
        ok: true,
        cmd: c.cmd,
        hosts: ids.length,
        ms: Math.round(performance.now() - t0),
        at_ms: Date.now(),
      };
    }
    case 'stats':
      return { ok: true, cmd: 'stats', ...fleet.stats() };
    case 'hosts':
      return { ok: true, cmd: 'hosts', hosts: fleet.entries() };
    case 'stop':
      return { ok: true, cmd: 'stop' };
  }
}
