import { type Preemption, type RunEvidence, RuntimeError } from '@heddle/runtime';
import type { SeedApi } from './seed-api.js';
import { consoleExitCode, type SeedEvidenceLimits, seedEvidence } from './seed-evidence.js';
import { assertNotStranded, pinnedOnSeed, type SeedInstance, seedCall } from './seed-instance.js';
import { SEED_REGISTRY } from './seed-pins.js';

/**
 * The cogs that must stop for a console run of `e` (the sensor feed, UDP 5006, is needed by one cog
 * at a time): every OTHER cog running on the Seed, including ones Heddle did not load. A preemption
 * names the instance when this adapter holds one for that cog.
 */
export async function seedConsolePreemptions(
  api: SeedApi,
  e: SeedInstance,
  table: ReadonlyMap<string, SeedInstance>,
): Promise<Preemption[]> {
  const installed = await seedCall('list the installed cogs', () => api.installed());
  const out: Preemption[] = [];
  for (const c of installed) {
    if (!c.running || c.id === e.cogId) continue;
    const held = [...table.values()].find((x) => x.cogId === c.id);
    out.push({
      registry: SEED_REGISTRY,
      workloadId: c.id,
      version: c.version,
      ...(held === undefined ? {} : { instanceId: held.handle.instanceId }),
    });
  }
  return out;
}

/** Refuses (`invalid_config`) a preemption that is not of a Seed store cog. */
export function checkPreemption(p: Preemption): string {
  if (p.registry !== SEED_REGISTRY) {
    throw new RuntimeError('invalid_config', `preemption.registry: ${p.registry} is not the Seed store`, {
      field: 'preemption.registry',
    });
  }
  return p.workloadId;
}

/**
 * Runs one pinned console command of `e`. Refuses: a command the operator did not pin for the cog
 * (`invalid_config`, field `command`), a stranded install, a cog that is no longer the pinned version,
 * and any other cog still running (`runtime`: the host preempts them first; this never stops them).
 */
export async function runSeedConsole(
  api: SeedApi,
  e: SeedInstance,
  command: string,
  limits: SeedEvidenceLimits,
  now: () => number,
): Promise<RunEvidence> {
  if (!e.consoleCommands.includes(command)) {
    throw new RuntimeError(
      'invalid_config',
      `command: ${JSON.stringify(command.slice(0, 128))} is not a pinned console command of ${e.cogId} (pinned: ${e.consoleCommands.join(', ') || 'none'})`,
      { field: 'command' },
    );
  }
  assertNotStranded(e, 'console');
  const installed = await seedCall('list the installed cogs', () => api.installed());
  pinnedOnSeed(installed, e.cogId, e.version);
  const others = installed.filter((c) => c.running && c.id !== e.cogId).map((c) => c.id);
  if (others.length > 0) {
    throw new RuntimeError(
      'runtime',
      `cogs still running on the Seed (${others.join(', ')}); a console run needs the sensor feed to itself`,
    );
  }
  const startedAtMs = now();
  const r = await seedCall(`console ${e.cogId}`, () => api.console(e.cogId, command));
  return seedEvidence(
    {
      instanceId: e.handle.instanceId,
      args: [command],
      exitCode: consoleExitCode(r),
      startedAtMs,
      endedAtMs: now(),
      output: r.output,
      errors: r.errors,
      notes: [],
    },
    limits,
  );
}
