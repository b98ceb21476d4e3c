import type { Capability } from '@heddle/placement';
import type {
  Admission,
  ControlMode,
  InstanceHandle,
  InstanceStatus,
  LinkSecurity,
  NetworkExposure,
  Preemption,
  RunEvidence,
  WorkloadRuntime,
} from '../contract.js';
import type { RuntimeWorkload, WorkloadConfig } from '../workload.js';

/**
 * What the native, WASI and container adapters have in common as {@link WorkloadRuntime}s: they
 * start and stop the processes themselves on this machine, and a console run never needs another
 * workload stopped. Each adapter implements the rest of the contract.
 */
export abstract class LocalRuntime implements WorkloadRuntime {
  abstract readonly id: string;
  abstract readonly route: string;
  abstract provides(): Promise<readonly Capability[]>;
  abstract admit(workload: RuntimeWorkload): Promise<Admission>;
  abstract load(workload: RuntimeWorkload, config: WorkloadConfig): Promise<InstanceHandle>;
  abstract adopt(handle: InstanceHandle, workload: RuntimeWorkload): Promise<void>;
  abstract start(handle: InstanceHandle): Promise<void>;
  abstract stop(handle: InstanceHandle, graceMs: number): Promise<RunEvidence>;
  abstract unload(handle: InstanceHandle): Promise<void>;
  abstract status(handle: InstanceHandle): Promise<InstanceStatus>;
  abstract logs(handle: InstanceHandle, lines: number): Promise<readonly string[]>;
  abstract networkExposure(): NetworkExposure;
  abstract console(handle: InstanceHandle, command: string): Promise<RunEvidence>;

  /** `managed`: this adapter starts and stops the processes. */
  controlMode(): ControlMode {
    return 'managed';
  }

  /** `local`: processes on this machine. */
  linkSecurity(): LinkSecurity {
    return 'local';
  }

  /** None: a console run here does not need another workload stopped (no sensor feed to take over). */
  async consolePreemptions(_handle: InstanceHandle): Promise<readonly Preemption[]> {
    return [];
  }

  /** Nothing to preempt (see {@link consolePreemptions}). */
  async preempt(_preemption: Preemption): Promise<void> {}

  /** Nothing to resume (see {@link consolePreemptions}). */
  async resume(_preemption: Preemption): Promise<void> {}
}
