import type { HostState } from './host-state.js';
import { moveLife } from './instance-life.js';
import { readStatus } from './instance-record.js';

/** Grace each running instance gets to stop when the host shuts down: 5 s. */
export const SHUTDOWN_STOP_GRACE_MS = 5_000;

/**
 * Leaves every instance in a known state for a host shutdown: each one running (or waiting for its
 * next interval run) is stopped through its WorkloadHost (teardown waiver, chained as
 * `workload.stop`, its lifecycle chained `stopped`), under its lock so that no call interleaves. Instances stay loaded; what the
 * operator wanted (`desired_running`) is kept in the records. Returns the ids stopped and those whose
 * stop failed (their state is whatever the adapter reports).
 */
export async function drainInstances(state: HostState): Promise<{ stopped: string[]; failed: string[] }> {
  const stopped: string[] = [];
  const failed: string[] = [];
  await Promise.all(
    [...state.instances.values()].map((p) =>
      state.locks.run(p.instanceId, async () => {
        const status = await readStatus(p);
        if (status.state !== 'running' && p.desiredRunning !== true) return;
        try {
          await p.host.stop(p.handle, SHUTDOWN_STOP_GRACE_MS);
          stopped.push(p.instanceId);
          await moveLife(state, p, 'stopped', 'host shutdown');
        } catch {
          failed.push(p.instanceId);
        }
      }),
    ),
  );
  return { stopped, failed };
}
