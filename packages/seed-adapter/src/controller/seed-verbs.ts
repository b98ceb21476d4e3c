import {
  type InstanceVerb,
  type PlacementRecord,
  type PlaneContext,
  PlaneError,
  type TargetRecord,
} from '@heddle/control-plane/driver';
import type { JsonObject, JsonValue } from '@heddle/envelope';
import type { CtlMethod } from '@heddle/protocol';
import { type RunEvidence, RuntimeError } from '@heddle/runtime';
import { seedFailure } from './seed-book.js';
import { type SeedHosts, seedHandle } from './seed-nodes.js';

/** Run evidence of a Seed instance as the operator API carries it (the token never in it). */
function evidenceJson(e: RunEvidence): { [key: string]: JsonValue } {
  return {
    instance_id: e.instanceId,
    exit_code: e.exitCode,
    signal: e.signal,
    started_at_ms: e.startedAtMs,
    ended_at_ms: e.endedAtMs,
    killed: e.killed,
    stdout: e.stdout.slice(-32_768),
    stderr: e.stderr.slice(-32_768),
    notes: [...e.notes],
  };
}

/**
 * An instance verb on a Seed placement, through the controller's governed WorkloadHost over the Seed's
 * adapter (gated and chained there); answers in the same shapes as a host's (`status`, `logs`,
 * `evidence`). A refusal of the adapter or the gate is `refused` with its code; a Seed that cannot be
 * reached is `unreachable`.
 */
export async function seedVerb(
  ctx: PlaneContext,
  hosts: SeedHosts,
  t: TargetRecord,
  p: PlacementRecord,
  method: InstanceVerb,
  body: JsonObject,
): Promise<{ [key: string]: JsonValue }> {
  const host = await hosts.hostFor(ctx, t);
  const handle = seedHandle(p);
  const status = async (): Promise<{ [key: string]: JsonValue }> => {
    const s = await host.status(handle);
    return { state: s.state, ...(s.detail === undefined ? {} : { detail: s.detail }) };
  };
  try {
    switch (method) {
      case 'workload.start':
        await host.start(handle);
        return { instance_id: p.instance_id, status: await status() };
      case 'workload.stop': {
        const grace = typeof body.grace_ms === 'number' ? body.grace_ms : 5_000;
        const evidence = await host.stop(handle, grace);
        return { instance_id: p.instance_id, evidence: evidenceJson(evidence), status: await status() };
      }
      case 'workload.unload':
        await host.unload(handle);
        return { instance_id: p.instance_id, unloaded: true };
      case 'workload.status': {
        const s = await status();
        return {
          instance: {
            instance_id: p.instance_id,
            workload: p.workload,
            version: p.version,
            runtime: p.runtime,
            ...s,
          },
        };
      }
      case 'workload.logs': {
        const n = typeof body.lines === 'number' ? body.lines : 100;
        return { instance_id: p.instance_id, lines: [...(await host.logs(handle, n))], truncated: false };
      }
      default:
        throw new PlaneError('invalid_input', `${method} is not an instance verb`, { field: 'method' });
    }
  } catch (err) {
    if (err instanceof PlaneError) throw err;
    if (err instanceof RuntimeError) {
      throw new PlaneError(
        'refused',
        `${method} ${p.instance_id} on Seed ${t.node_id}: ${err.code}: ${err.message}`,
        {
          cause: err,
        },
      );
    }
    throw seedFailure(err, t.url);
  }
}
