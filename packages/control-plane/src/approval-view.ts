/**
 * What the controller shows of an approval request of its gate's queue and of the place it holds
 * (docs/operator-api.md, "Approvals"). The same shape is the operator API's answer and what
 * `heddle approvals ls|show --json` prints.
 */

/** The life of an approval request: pending until an operator decides or it expires. */
export type ApprovalViewState = 'pending' | 'approved' | 'rejected' | 'expired';

/** The approval states, in life order. */
export const APPROVAL_STATES: readonly ApprovalViewState[] = Object.freeze([
  'pending',
  'approved',
  'rejected',
  'expired',
]);

/**
 * What became of a place held for an approval: `held` (waiting for the operator), `placed` (approved
 * and placed through the engine), `refused` (rejected, or denied when the approval was decided again),
 * `expired` (nobody decided in time), `failed` (approved, but no node took it: `detail` says why),
 * `unsettled` (approved and sent, its answer lost: see `GET /v1/unsettled`).
 */
export type HeldPlaceStatus = 'held' | 'placed' | 'refused' | 'expired' | 'failed' | 'unsettled';

/** The held place statuses. */
export const HELD_PLACE_STATUSES: readonly HeldPlaceStatus[] = Object.freeze([
  'held',
  'placed',
  'refused',
  'expired',
  'failed',
  'unsettled',
]);

/** A place held for an approval. */
export interface HeldPlaceView {
  /** The workload, its version and package. */
  readonly workload: string;
  readonly version: string;
  readonly manifest_hash: string;
  /** The node the engine chose when it deferred (the approval covers its gate context). */
  readonly node_id: string;
  /** The variant chosen there. */
  readonly variant: string;
  readonly status: HeldPlaceStatus;
  /** The order the approved place made (null until then). */
  readonly order_id: string | null;
  /** The instance it placed (status `placed`). */
  readonly instance_id: string | null;
  /** Why it was refused or failed, for people (null otherwise). */
  readonly detail: string | null;
}

/** How an approval came out when it was decided again against the policy in force. */
export interface ApprovalOutcomeView {
  readonly verdict: 'permit' | 'deny';
  /** The deciding rule. */
  readonly rule: string;
  /** Why, for people. */
  readonly reason: string;
}

/** One approval request as the controller shows it. */
export interface ApprovalView {
  /** The request's id (16..64 lower-case hex). */
  readonly approval_id: string;
  readonly state: ApprovalViewState;
  /** The deferred gate action (`workload.place`). */
  readonly action: string;
  /** Who asked the gate (the controller's node id). */
  readonly agent: string;
  /** The defer rule of the policy, and its reason. */
  readonly rule: string;
  readonly reason: string;
  /** When it was queued and when it expires unless decided (ms since the epoch). */
  readonly created_at_ms: number;
  readonly expires_at_ms: number;
  /** When it was approved, rejected or expired (null while pending). */
  readonly decided_at_ms: number | null;
  /** Who approved or rejected it (null while pending, and for an expiry). */
  readonly decided_by: string | null;
  /** The approver's note. */
  readonly note: string | null;
  /** What an approval came to when decided again (null unless approved). */
  readonly outcome: ApprovalOutcomeView | null;
  /** Chain hash of the defer decision. */
  readonly defer_event: string | null;
  /** Chain hash of the approval, rejection or expiry. */
  readonly resolution_event: string | null;
  /** The place it holds (null for a request that holds none, such as one whose place was lost in a crash). */
  readonly place: HeldPlaceView | null;
}

/** What happened to an approval, as told to {@link ApprovalListener}s. */
export type ApprovalEventKind = 'requested' | 'approved' | 'rejected' | 'expired' | 'placed' | 'failed';

/** One approval event: the kind and the approval as it is now. */
export interface ApprovalEvent {
  readonly kind: ApprovalEventKind;
  readonly approval: ApprovalView;
}

/** Told of every approval event of a control plane (see `ControlPlane.onApproval`); must not throw. */
export type ApprovalListener = (event: ApprovalEvent) => void;
