import type { InstanceStatus } from '../contract.js';
import type { ContainerInspect } from './container-inspect.js';
import { signalOfExitCode } from './container-inspect.js';
import type { ContainerEntry } from './container-instance.js';

/**
 * An instance's status from its container's `inspect`: `running`, `loaded` (created, never started),
 * `failed` (dead, a non-zero exit or out of memory), `stopped` (by a stop), or `exited` (also while an
 * interval instance waits for its next run); `unknown` when the container is gone.
 */
export function containerStatus(e: ContainerEntry, ins: ContainerInspect | undefined): InstanceStatus {
  const instanceId = e.handle.instanceId;
  if (ins === undefined) return { instanceId, state: 'unknown', detail: `container ${e.name} is gone` };
  const base = { instanceId, runs: e.runs };
  const ended = {
    ...(ins.startedAtMs === null ? {} : { startedAtMs: ins.startedAtMs }),
    lastExitCode: signalOfExitCode(ins.exitCode) === null ? ins.exitCode : null,
    lastSignal: signalOfExitCode(ins.exitCode),
    ...(ins.oomKilled ? { detail: 'memory limit exceeded' } : {}),
  };
  if (ins.running)
    return {
      ...base,
      state: 'running',
      pid: ins.pid,
      ...(ins.startedAtMs === null ? {} : { startedAtMs: ins.startedAtMs }),
    };
  if (ins.status === 'created') return { ...base, state: 'loaded' };
  if (ins.status === 'dead') return { ...base, ...ended, state: 'failed' };
  if (e.stopped) return { ...base, ...ended, state: 'stopped' };
  if (e.refused !== undefined) return { ...base, ...ended, state: 'failed', detail: e.refused };
  if (e.runMode.type === 'interval' && e.nextRunAtMs !== undefined) {
    const wait = Math.max(0, Math.round((e.nextRunAtMs - Date.now()) / 1000));
    return { ...base, ...ended, state: 'exited', detail: `waiting ${wait} s for the next interval` };
  }
  return { ...base, ...ended, state: ins.exitCode === 0 && !ins.oomKilled ? 'exited' : 'failed' };
}
