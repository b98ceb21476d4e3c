import { HeddleError } from '@heddle/envelope';

/**
 * Stable codes of {@link PlaneError}:
 * - `invalid_input`: an order, URL, key or other input does not fit (the field is named);
 * - `package_invalid`: the package failed verification against the controller's anchors;
 * - `unknown_node`, `unknown_instance`, `unknown_alert`: nothing by that id;
 * - `node_exists`: a node with that id or URL is already known;
 * - `key_mismatch`: the node answered with another key than the one expected;
 * - `unreachable`: a node could not be reached (nothing was done there);
 * - `refused`: the node refused (its refusal code and reason are in the message);
 * - `indeterminate`: a state-changing call got no valid answer and could not be settled yet;
 * - `governance`: the controller's gate denied the action;
 * - `unplaceable`: no node fits (every node's reason is in `reasons`);
 * - `duplicate_instance`: a pinned order's node already holds, may hold or is placing the identical
 *   instance (same package, config values and mode) for another order;
 * - `idempotency_conflict`: an idempotency key was already used for a different order;
 * - `idempotency_in_progress`: the idempotency key's place is still running on another controller
 *   (or an earlier life of this one); retry later for its answer;
 * - `no_driver`: the node's kind has no driver in this controller (see `NodeDriver`);
 * - `approval_not_found`: no approval request by that id;
 * - `approvals_disabled`: this controller keeps no approval queue;
 * - `job_invalid`: a job file does not fit (the field is named);
 * - `unknown_job`, `unknown_job_version`: no job, or no version of it, by that name or number;
 * - `state`: the state store failed.
 */
export type PlaneErrorCode =
  | 'invalid_input'
  | 'package_invalid'
  | 'unknown_node'
  | 'unknown_instance'
  | 'unknown_alert'
  | 'node_exists'
  | 'key_mismatch'
  | 'unreachable'
  | 'refused'
  | 'indeterminate'
  | 'governance'
  | 'unplaceable'
  | 'duplicate_instance'
  | 'idempotency_conflict'
  | 'idempotency_in_progress'
  | 'no_driver'
  | 'approval_not_found'
  | 'approvals_disabled'
  | 'job_invalid'
  | 'unknown_job'
  | 'unknown_job_version'
  | 'state';

/** An error of the control plane, with a stable {@link PlaneErrorCode}. */
export class PlaneError extends HeddleError {
  declare readonly code: PlaneErrorCode;
  /** Per-node reasons (for `unplaceable`), node id to reason. */
  readonly reasons: Readonly<Record<string, string>>;

  constructor(
    code: PlaneErrorCode,
    message: string,
    options: { field?: string; cause?: unknown; reasons?: Readonly<Record<string, string>> } = {},
  ) {
    super(code, message, {
      ...(options.field === undefined ? {} : { field: options.field }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.reasons = options.reasons ?? {};
  }
}

/**
 * Stable codes of {@link StateError}: `closed`, `corrupt` (a stored row does not parse), `schema`
 * (an unknown newer schema), `io`, `conflict` (a write-once record, a job version, is already
 * stored), and for a server database: `store_unavailable` (the connection is lost, the server cannot
 * be reached or did not answer in time) and `store_conflict` (a transaction kept losing
 * serialization conflicts or deadlocks with other writers, and was given up).
 */
export type StateErrorCode =
  | 'closed'
  | 'corrupt'
  | 'schema'
  | 'io'
  | 'conflict'
  | 'store_unavailable'
  | 'store_conflict';

/** An error of a {@link StateStore}. */
export class StateError extends HeddleError {
  declare readonly code: StateErrorCode;
}
