import type { InstanceStatus, RunEvidence } from '@heddle/runtime';
import type { CogLogs, InstalledCog, SeedApi } from './seed-api.js';
import { logsOrNote, type SeedEvidenceLimits, seedEvidence } from './seed-evidence.js';
import { type SeedInstance, seedCall } from './seed-instance.js';

/**
 * Stops `e`'s cog when it runs and returns the evidence: the cog's recent output and errors from the
 * Seed's logs (a note instead when the logs cannot be read; the stop itself still counts).
 */
export async function stopSeedCog(
  api: SeedApi,
  e: SeedInstance,
  limits: SeedEvidenceLimits,
  now: () => number,
): Promise<RunEvidence> {
  const installed = await seedCall('list the installed cogs', () => api.installed());
  if (installed.some((c) => c.id === e.cogId && c.running)) {
    await seedCall(`stop ${e.cogId}`, () => api.stop(e.cogId));
  }
  let logs: CogLogs | Error;
  try {
    logs = await seedCall(`logs of ${e.cogId}`, () => api.logs(e.cogId, limits.lines));
  } catch (err) {
    // cast: a failed logs read is kept as the error it threw (Errors only, from the client)
    logs = err as Error;
  }
  const { output, errors, notes } = logsOrNote(logs);
  const startedAtMs = e.startedAtMs;
  e.startedAtMs = null;
  return seedEvidence(
    {
      instanceId: e.handle.instanceId,
      args: [e.cogId],
      exitCode: null,
      startedAtMs,
      endedAtMs: now(),
      output,
      errors,
      notes,
    },
    limits,
  );
}

/**
 * Unloads `e`'s cog: stops it when it runs, and uninstalls it only when this adapter installed it (a
 * stranded install too); otherwise it stays installed, stopped.
 */
export async function unloadSeedCog(api: SeedApi, e: SeedInstance): Promise<void> {
  const installed = await seedCall('list the installed cogs', () => api.installed());
  const c = installed.find((x) => x.id === e.cogId);
  // A cog someone else put there at another version is not this instance's: left as it is.
  const ours = c !== undefined && (e.installedHere || c.version === e.version);
  if (ours && c.running) await seedCall(`stop ${e.cogId}`, () => api.stop(e.cogId));
  if (e.installedHere && ours) {
    await seedCall(`uninstall ${e.cogId}`, () => api.uninstall(e.cogId));
  }
}

/**
 * An instance's status from the Seed's installed list (or the error reading it): `running` (with the
 * pid), `stopped`, `failed` for a stranded install, `unknown` (with a detail) when the cog is gone, at
 * another version than pinned, or the Seed could not be read.
 */
export function seedStatusOf(e: SeedInstance, list: readonly InstalledCog[] | Error): InstanceStatus {
  const instanceId = e.handle.instanceId;
  if (e.stranded)
    return { instanceId, state: 'failed', detail: 'stranded install: unload it to remove the cog' };
  if (list instanceof Error) return { instanceId, state: 'unknown', detail: list.message };
  const c = list.find((x) => x.id === e.cogId);
  if (c === undefined)
    return { instanceId, state: 'unknown', detail: `${e.cogId} is not installed on the Seed` };
  if (c.version !== e.version) {
    return {
      instanceId,
      state: 'unknown',
      detail: `${e.cogId} is at ${c.version} on the Seed, pinned ${e.version}`,
    };
  }
  if (!c.running) return { instanceId, state: 'stopped' };
  return {
    instanceId,
    state: 'running',
    ...(typeof c.pid === 'number' ? { pid: c.pid } : {}),
    ...(e.startedAtMs === null ? {} : { startedAtMs: e.startedAtMs }),
  };
}
