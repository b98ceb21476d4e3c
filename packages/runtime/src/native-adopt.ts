import type { InstanceHandle } from './contract.js';
import { RuntimeError } from './errors.js';
import type { NativeInstance } from './native-instance.js';
import {
  type NativeInstanceRecord,
  processStartTime,
  readInstanceRecord,
  readPidRecord,
  removePidRecord,
} from './native-instance-file.js';
import type { RuntimeWorkload } from './workload.js';

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The record of an instance to adopt from its directory: `unknown_instance` when there is none for
 * this id, `admission` when it was loaded from another workload.
 */
export function adoptedRecord(
  dir: string,
  handle: InstanceHandle,
  workload: RuntimeWorkload,
): NativeInstanceRecord {
  const record = readInstanceRecord(dir);
  if (record === undefined || record.instanceId !== handle.instanceId) {
    throw new RuntimeError('unknown_instance', `instanceId: no record of ${handle.instanceId}`, {
      field: 'instanceId',
    });
  }
  if (record.workloadRef !== workload.ref) {
    throw new RuntimeError(
      'admission',
      `workload: ${handle.instanceId} was loaded from ${record.workloadRef}`,
      {
        field: 'workload',
      },
    );
  }
  return record;
}

/**
 * Re-attaches an adopted instance to its process: when the pid file names a process that still runs
 * with the same start time, the instance is `running` and watched until the process is gone (then
 * `exited`, exit status unknown, unless a stop came first); otherwise it is `exited`.
 */
export function reattachNativeProcess(inst: NativeInstance): void {
  const loop = inst.loop;
  const pid = readPidRecord(inst.dir);
  if (pid !== undefined && pid.startTime !== null && processStartTime(pid.pid) === pid.startTime) {
    const gone = (async () => {
      while (processStartTime(pid.pid) === pid.startTime) await delay(250);
    })();
    inst.adopted = { ...pid, gone };
    loop.state = 'running';
    loop.detail = 'adopted after a restart: output is not captured, exit status will not be known';
    void gone.then(() => {
      if (inst.adopted?.pid !== pid.pid) return;
      inst.adopted = undefined;
      removePidRecord(inst.dir);
      if (!loop.stopping) {
        loop.state = 'exited';
        loop.detail = 'adopted process ended; exit status unknown';
      }
    });
  } else {
    removePidRecord(inst.dir);
    loop.state = 'exited';
    loop.detail = 'not running after a restart of the host';
  }
}
