import { type Preemption, type RunEvidence, RuntimeError } from '@heddle/runtime';
import type { ConsoleResult, SeedApi } from './seed-api.js';
import { consoleExitCode, type SeedEvidenceLimits, seedEvidence } from './seed-evidence.js';
import { assertNotStranded, pinnedOnSeed, type SeedInstance, seedCall } from './seed-instance.js';
import { SEED_REGISTRY, type SeedPin } from './seed-pins.js';

/** The note a console run's evidence carries when the run read synthetic data instead of the sensor feed. */
export const SYNTHETIC_FEED_NOTE = 'synthetic_feed';

/**
 * The cogs that must stop for a console run of `e`: a console run needs the sensor feed (UDP 5006) to
 * itself, so every cog running on the Seed, this one's own daemon included, and cogs Heddle did not
 * load. A preemption names the instance when this adapter holds one for that cog, and says
 * `operatorPinned: false` for a cog the operator never pinned (someone else's: gated as `unsigned`).
 */
export async function seedConsolePreemptions(
  api: SeedApi,
  e: SeedInstance,
  table: ReadonlyMap<string, SeedInstance>,
  pins: readonly SeedPin[],
): Promise<Preemption[]> {
  const installed = await seedCall('list the installed cogs', () => api.installed());
  const out: Preemption[] = [];
  for (const c of installed) {
    if (!c.running) continue;
    const held = c.id === e.cogId ? e : [...table.values()].find((x) => x.cogId === c.id);
    const pinned = held !== undefined || pins.some((p) => p.id === c.id && p.version === c.version);
    out.push({
      registry: SEED_REGISTRY,
      workloadId: c.id,
      version: c.version,
      ...(held === undefined ? {} : { instanceId: held.handle.instanceId }),
      ...(pinned ? {} : { operatorPinned: false }),
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

const SYNTHETIC_RE = /synthetic/i;

/**
 * Why a console answer shows the run read synthetic data rather than the sensor feed, or undefined: a
 * line of its errors that mentions synthetic data (cog-sensor-sources warns so when it cannot bind
 * UDP 5006), or an output line that is a JSON object whose `source` (or `feed`) is `synthetic`.
 */
export function syntheticFeedOf(r: ConsoleResult): string | undefined {
  const warning = r.errors.find((l) => SYNTHETIC_RE.test(l));
  if (warning !== undefined) return warning.slice(0, 300);
  for (const line of r.output) {
    if (!line.startsWith('{') || !SYNTHETIC_RE.test(line)) continue;
    try {
      // cast: a JSON line of the console output; each field read from it is checked
      const v = JSON.parse(line) as Record<string, unknown>;
      if (v.source === 'synthetic' || v.feed === 'synthetic')
        return `output reports source synthetic: ${line.slice(0, 200)}`;
    } catch {
      // not JSON: not a data line
    }
  }
  return undefined;
}

/**
 * Runs one pinned console command of `e`. Refuses: a command the operator did not pin for the cog
 * (`invalid_config`, field `command`), one the Seed's manifest does not allow (`invalid_config`), a
 * stranded install, a cog that is no longer the pinned version, and any cog still running (`runtime`:
 * the host preempts them first; this never stops them). A run that read synthetic data (the answer's
 * errors or data lines say so) carries the note `synthetic_feed: ...` in its evidence.
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
  const manifest = await seedCall(`manifest of ${e.cogId}`, () => api.manifest(e.cogId));
  if (manifest.allowedCommands !== undefined && !manifest.allowedCommands.includes(command)) {
    throw new RuntimeError(
      'invalid_config',
      `command: ${JSON.stringify(command.slice(0, 128))} is not in the allowed_commands of ${e.cogId}'s manifest on the Seed (${manifest.allowedCommands.join(', ') || 'none'})`,
      { field: 'command' },
    );
  }
  const running = installed.filter((c) => c.running).map((c) => c.id);
  if (running.length > 0) {
    throw new RuntimeError(
      'runtime',
      `cogs still running on the Seed (${running.join(', ')}); a console run needs the sensor feed to itself`,
    );
  }
  const startedAtMs = now();
  const r = await seedCall(`console ${e.cogId}`, () => api.console(e.cogId, command));
  const synthetic = syntheticFeedOf(r);
  return seedEvidence(
    {
      instanceId: e.handle.instanceId,
      args: [command],
      exitCode: consoleExitCode(r),
      startedAtMs,
      endedAtMs: now(),
      output: r.output,
      errors: r.errors,
      notes: synthetic === undefined ? [] : [`${SYNTHETIC_FEED_NOTE}: ${synthetic}`],
    },
    limits,
  );
}
