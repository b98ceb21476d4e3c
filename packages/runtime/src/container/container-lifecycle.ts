import type { RunEvidence } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { type ContainerEngine, runEngine } from './container-engine.js';
import { inspectContainer } from './container-evidence.js';
import type { ContainerInspect } from './container-inspect.js';
import type { ContainerEntry } from './container-instance.js';

/**
 * Watches the entry's current run (`wait`): when it ends without a stop, its evidence (`evidenceOf`)
 * goes to the entry's run hooks (`runEnded`); in interval mode the container is started again `secs`
 * later, after the hooks' `beforeRun` allowed it (a refusal leaves the entry `refused`, no further
 * run). All of it only for as long as the entry is not stopped and still in `generation` (start, stop
 * and unload bump it). Without hooks, only interval instances are watched.
 */
export function watchInterval(
  engine: ContainerEngine,
  e: ContainerEntry,
  generation: number,
  evidenceOf?: () => Promise<RunEvidence>,
): void {
  if (e.runMode.type !== 'interval' && e.hooks === undefined) return;
  const current = (): boolean => e.generation === generation && !e.stopped;
  void runEngine(engine, ['wait', e.name], { timeoutMs: 2 ** 31 - 1 })
    .then(async (r) => {
      if (!current() || r.code !== 0) return;
      if (e.endedBeforeAdopt === true) {
        // The run ended before this adapter adopted the container: not a later run (`watchRuns`).
        e.endedBeforeAdopt = false;
      } else if (e.hooks !== undefined && evidenceOf !== undefined) {
        const ev = await evidenceOf().catch(() => undefined);
        if (ev !== undefined && current()) e.hooks.runEnded(e.runs, ev);
      }
      if (e.runMode.type !== 'interval' || !current()) return;
      const secs = e.runMode.secs;
      e.nextRunAtMs = Date.now() + secs * 1000;
      e.timer = setTimeout(async () => {
        if (!current()) return;
        e.nextRunAtMs = undefined;
        if (e.hooks !== undefined) {
          try {
            await e.hooks.beforeRun(e.runs + 1);
          } catch (err) {
            if (current()) e.refused = `re-run refused: ${err instanceof Error ? err.message : String(err)}`;
            return;
          }
          if (!current()) return;
        }
        const s = await runEngine(engine, ['start', e.name]);
        if (s.code !== 0 || !current()) return;
        e.runs++;
        watchInterval(engine, e, generation, evidenceOf);
      }, secs * 1000);
      e.timer.unref();
    })
    .catch(() => undefined);
}

/** Ends an entry's scheduling: marks it stopped, invalidates its watchers and cancels the next run. */
export function haltInterval(e: ContainerEntry): void {
  e.stopped = true;
  e.generation++;
  if (e.timer !== undefined) clearTimeout(e.timer);
}

/**
 * Stops a running container: `stop -t <ceil(grace s)>` (SIGTERM, then the engine's SIGKILL), then
 * `kill` if it still runs. Resolves with its final `inspect` and whether it was killed (by `kill`, or
 * a stop that ended with 137); `runtime` when it still runs after that.
 */
export async function stopContainer(
  engine: ContainerEngine,
  name: string,
  instanceId: string,
  graceMs: number,
): Promise<{ readonly ins: ContainerInspect | undefined; readonly killed: boolean }> {
  let killed = false;
  const before = await inspectContainer(engine, name);
  let stopRequested = false;
  if (before?.running === true) {
    stopRequested = true;
    const secs = Math.max(0, Math.ceil(graceMs / 1000));
    await runEngine(engine, ['stop', '-t', String(secs), name], { timeoutMs: graceMs + 10_000 });
    const after = await inspectContainer(engine, name);
    if (after?.running === true) {
      await runEngine(engine, ['kill', name], { timeoutMs: 15_000 });
      killed = true;
    }
  }
  const ins = await inspectContainer(engine, name);
  if (ins?.running === true)
    throw new RuntimeError('runtime', `instance ${instanceId}: container ${name} still runs after kill`, {
      field: 'instanceId',
    });
  if (stopRequested && ins?.exitCode === 137) killed = true;
  return { ins, killed };
}
