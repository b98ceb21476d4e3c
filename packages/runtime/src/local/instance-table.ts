import type { InstanceHandle } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { deriveInstanceId } from '../instance-id.js';
import type { RuntimeWorkload, WorkloadConfig } from '../workload.js';

/** The instances an adapter holds, by instance id. */
export class InstanceTable<Instance> {
  readonly #byId = new Map<string, Instance>();

  /** The instance of `handle`; `unknown_instance` (field `instanceId`) when this adapter does not hold it. */
  get(handle: InstanceHandle): Instance {
    const inst = this.#byId.get(handle.instanceId);
    if (inst === undefined) {
      throw new RuntimeError('unknown_instance', `instanceId: ${handle.instanceId} is not loaded here`, {
        field: 'instanceId',
      });
    }
    return inst;
  }

  /** The instance with this id, or undefined. */
  find(instanceId: string): Instance | undefined {
    return this.#byId.get(instanceId);
  }

  /** Whether an instance with this id is held. */
  has(instanceId: string): boolean {
    return this.#byId.has(instanceId);
  }

  /** Holds `instance` as `instanceId`. */
  set(instanceId: string, instance: Instance): void {
    this.#byId.set(instanceId, instance);
  }

  /** Forgets the instance with this id. */
  delete(instanceId: string): void {
    this.#byId.delete(instanceId);
  }
}

/** The instance id of a load request on this node (see {@link deriveInstanceId}). */
export function instanceIdFor(workload: RuntimeWorkload, config: WorkloadConfig): string {
  return deriveInstanceId(workload.id, workload.ref, config.values, config.runMode, config.host.nodeId);
}

/** The handle an adapter returns for an instance it loaded. */
export function instanceHandleFor(
  runtime: string,
  instanceId: string,
  workload: RuntimeWorkload,
): InstanceHandle {
  return { instanceId, runtime, workloadId: workload.id, version: workload.version };
}

/**
 * Refuses to start (`already running`) or unload (`stop it first`) an instance that still runs or
 * waits for its next interval run (code `runtime`, field `instanceId`).
 */
export function assertNotRunning(instanceId: string, running: boolean, action: 'start' | 'unload'): void {
  if (!running) return;
  const message =
    action === 'start'
      ? `instanceId: ${instanceId} is already running`
      : `instanceId: ${instanceId} is running; stop it first`;
  throw new RuntimeError('runtime', message, { field: 'instanceId' });
}
