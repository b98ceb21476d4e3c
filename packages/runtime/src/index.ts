// @heddle/runtime: what a host, a controller or another adapter needs. Test tools are in ./testing.

export type { ContainerRuntimeOptions } from './container/container-runtime.js';
export { ContainerRuntime } from './container/container-runtime.js';
export type {
  Admission,
  ControlMode,
  InstanceHandle,
  InstanceState,
  InstanceStatus,
  LinkSecurity,
  LoadedInstance,
  NetworkExposure,
  Preemption,
  RunEvidence,
  RunHooks,
  WorkloadRuntime,
} from './contract.js';
export type { RuntimeErrorCode } from './errors.js';
export { RuntimeError } from './errors.js';
export type {
  HostedInstance,
  HostGate,
  HostRecorder,
  WorkloadHostOptions,
} from './governed/workload-host.js';
export {
  RERUN_PHASE,
  RUN_EXIT_KIND,
  RUNTIME_CHAIN_SOURCE,
  WorkloadHost,
} from './governed/workload-host.js';
export type { HostContextFacts } from './host-context.js';
export { gateContextFor, STORE_PIN_RESOURCE_COST } from './host-context.js';
export { deriveInstanceId } from './instance-id.js';
export type { LifecycleState, LifecycleTransition } from './lifecycle.js';
export {
  canTransition,
  InstanceLife,
  isGone,
  LIFECYCLE_HISTORY,
  LIFECYCLE_STATES,
  LIFECYCLE_TRANSITIONS,
  LifecycleError,
  lifecyclePayload,
} from './lifecycle.js';
export { processStartTime } from './native/native-instance-file.js';
export type { NativeRuntimeOptions } from './native/native-runtime.js';
export { NativeRuntime } from './native/native-runtime.js';
export { hostCogArch } from './probe/elf.js';
export type { SystemFacts } from './probe/system-probe.js';
export { probeSystem } from './probe/system-probe.js';
export type { WasiRuntimeOptions } from './wasi/wasi-runtime.js';
export { WasiRuntime } from './wasi/wasi-runtime.js';
export type { HostContract, RunMode, RuntimeWorkload, WorkloadConfig, WorkloadSource } from './workload.js';
export { checkRunMode, MAX_INTERVAL_SECS, workloadFromPackage, workloadFromStorePin } from './workload.js';
