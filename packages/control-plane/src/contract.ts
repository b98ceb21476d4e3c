// The `@heddle/control-plane/contract` entry: what an operator client needs of the control plane at
// run time (the order schema and label names, the idempotency key pattern, the placement, approval and
// held-place states, the error classes, who is acting: `runAsActor`),
// without the plane itself. A client that imports only this entry (the operator API client, `heddle
// place`) does not load the placement engine, the wire, the gate or the WebSocket library.

export { type Actor, actorField, currentActor, runAsActor } from './actor.js';
export {
  APPROVAL_STATES,
  type ApprovalView,
  type ApprovalViewState,
  HELD_PLACE_STATUSES,
  type HeldPlaceStatus,
} from './approval-view.js';
export { PlaneError, StateError } from './errors.js';
export { IDEMPOTENCY_KEY_PATTERN } from './idempotency.js';
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
export { LabelName, LabelValue, type PlaceOrderInput, PlaceOrderInputSchema } from './order.js';
export { PLACEMENT_STATES } from './state-store.js';
