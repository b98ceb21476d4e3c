import { type ContainerEngine, runEngine } from './container-engine.js';
import { inspectContainer } from './container-evidence.js';
import type { ContainerInspect } from './container-inspect.js';
import type { ContainerEntry } from './container-instance.js';
import { RuntimeError } from './errors.js';

/**
 * Interval mode: after each run ends (`wait`), starts the container again `secs` later, for as long as
 * the entry is not stopped and still in `generation` (start, stop and unload bump it). A no-op for
 * other run modes.
 */
export function watchInterval(engine: ContainerEngine, e: ContainerEntry, generation: number): void {
  if (e.runMode.type !== 'interval') return;
  const secs = e.runMode.secs;
  void runEngine(engine, ['wait', e.name], { timeoutMs: 2 ** 31 - 1 })
    .then((r) => {
      if (e.generation !== generation || e.stopped || r.code !== 0) return;
      e.nextRunAtMs = Date.now() + secs * 1000;
      e.timer = setTimeout(() => {
        if (e.generation !== generation || e.stopped) return;
        e.nextRunAtMs = undefined;
        void runEngine(engine, ['start', e.name]).then((s) => {
          if (s.code !== 0 || e.generation !== generation || e.stopped) return;
          e.runs++;
          watchInterval(engine, e, generation);
        });
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
