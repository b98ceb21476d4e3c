export { type Actor, actorField, currentActor, runAsActor } from './actor.js';
export { ALERT_KIND } from './alerts.js';
export {
  APPROVAL_STATES,
  type ApprovalEvent,
  type ApprovalEventKind,
  type ApprovalListener,
  type ApprovalOutcomeView,
  type ApprovalView,
  type ApprovalViewState,
  HELD_PLACE_STATUSES,
  type HeldPlaceStatus,
  type HeldPlaceView,
} from './approval-view.js';
export { Caller, type CallSpec, type TransferProgress } from './caller.js';
export { DEFAULT_PLANE_CONFIG, type PlaneConfig, planeConfig } from './config.js';
export { ControlPlane, type ControlPlaneOptions } from './control-plane.js';
export {
  API_HOST,
  CONTROLLER_CONFIG_SCHEMA,
  type ControllerConfigFile,
  ControllerConfigFileSchema,
  DEFAULT_API_PORT,
  type PostgresStateConfig,
  type RemoteApiConfig,
  type StateConfig,
} from './controller-config-file.js';
export {
  DaemonLoop,
  type DaemonLoopOptions,
  logTick,
  type ReloadableRevocations,
  type TickLog,
} from './daemon-loop.js';
export {
  PlaneError,
  type PlaneErrorCode,
  StateError,
  type StateErrorCode,
} from './errors.js';
export { hostDriver } from './host-driver.js';
export { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_TTL_MS } from './idempotency.js';
export {
  type JobConstraints,
  type JobHealthCheck,
  type JobIssue,
  JobName,
  type JobSpec,
  JobSpecSchema,
  type JobUpdate,
  jobIssues,
  jobSpecHash,
  MAX_JOB_COUNT,
  parseJobSpec,
  parseJobText,
} from './job-file.js';
export type {
  JobInstanceView,
  JobPlanChange,
  JobPlanView,
  JobRunView,
  JobStatusView,
  JobVersionView,
} from './job-ops.js';
export type { JobReconcileReport } from './job-reconcile.js';
export type { TickReport } from './lifecycle-tick.js';
export type { AddNodeOptions } from './node-book.js';
export { HOST_NODE_KIND, type NodeDriver } from './node-driver.js';
export {
  type DrainLeft,
  type DrainMove,
  type DrainReport,
  type LabelChange,
  MAX_NODE_LABELS,
  NODE_KIND,
} from './node-ops.js';
export type { NodeClockView, NodeView } from './node-view.js';
export {
  LabelName,
  LabelValue,
  type PlaceOrderInput,
  PlaceOrderInputSchema,
  parseOrder,
} from './order.js';
export type { AttemptOutcome, AttemptOutcomeKind, PlaceHooks, PlaceResult } from './place.js';
export { PLANE_CHAIN_SOURCE } from './plane-context.js';
export {
  type AlertEventData,
  type ApprovalEventData,
  type ApprovalEventState,
  type EventsSince,
  type InstancePlacedData,
  type InstanceRemovedData,
  type InstanceRescheduledData,
  type InstanceStateData,
  type JobEventData,
  type NodeJoinedData,
  type NodeLivenessData,
  type NodeRemovedData,
  PLANE_EVENT_TYPES,
  type PlaneEvent,
  type PlaneEventListener,
  type PlaneEventMap,
  PlaneEvents,
  type PlaneEventsOptions,
  type PlaneEventType,
} from './plane-events.js';
export { REVOKE_METHOD, type RevocationNodeResult, type RevocationPushReport } from './revocation-push.js';
export type { SettleReport } from './settle.js';
export { type CopyableStore, copyState, countState, type StateCounts } from './state-copy.js';
export {
  type AlertReason,
  type AlertRecord,
  type HeldRevocationList,
  type HostSoftwareRecord,
  type IdempotencyRecord,
  type JobInstanceRecord,
  type JobRecord,
  type JobVersionRecord,
  type LabelConstraint,
  type NodeLoad,
  type NodeMetaRecord,
  type OrderPackageFacts,
  type OrderRecord,
  type OrderStorePin,
  PLACEMENT_STATES,
  type PlaceClaimRecord,
  type PlacementRecord,
  type PlacementState,
  type RescheduleRecord,
  type RevocationAckRecord,
  type SeedTargetInfo,
  type SharedStateChange,
  type StateStore,
  type TargetRecord,
  type UnsettledRecord,
} from './state-store.js';
