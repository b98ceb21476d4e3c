export { type AdvertisementOptions, workloadHostAdvertisement } from './advertisement.js';
export type { HostCallEvent } from './call-event.js';
export { DEPARTED_CAPACITY } from './departed.js';
export { HostServiceError, type HostServiceErrorCode } from './errors.js';
export { DEFAULT_FACTS_TTL_MS, NodeFactsSource, type NodeFactsSourceOptions } from './facts-source.js';
export {
  CONFIG_LOG_LEVELS,
  HOST_CONFIG_SCHEMA,
  type HostConfigFile,
  HostConfigFileSchema,
  LogLevelConfigSchema,
  type MetricsListenConfig,
  MetricsListenSchema,
  SUPERVISOR_BOUNDS,
} from './host-config-file.js';
export { type HostCallContext, HostService, type HostServiceOptions } from './host-service.js';
export { MAX_EVIDENCE_CHARS, MAX_LOG_BYTES } from './instance-ops.js';
export type { PlacedInstance, Supervision } from './instance-record.js';
export { ControllerLease } from './lease.js';
export { MAX_NONCE_JOURNAL_BYTES, type NonceJournalReport } from './nonce-journal.js';
export { type ReadinessProbe, readinessProbeFor, TCP_PROBE_TIMEOUT_MS, tcpAccepts } from './readiness.js';
export type { RecoveryReport } from './recovery.js';
export {
  DEFAULT_REFUSAL_WINDOW_MS,
  DEFAULT_REFUSALS_PER_WINDOW,
  type RefusalBudgetOptions,
} from './refusal-budget.js';
export { Supervisor, type SupervisorEvent } from './supervisor.js';
export {
  DEFAULT_SUPERVISOR_POLICY,
  type SupervisorOptions,
  type SupervisorPolicy,
} from './supervisor-policy.js';
