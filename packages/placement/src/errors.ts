import { HeddleError } from '@heddle/envelope';

/**
 * Stable codes of {@link PlacementError}:
 * - `invalid_capability`, `invalid_requirement`, `invalid_request`, `invalid_facts`, `invalid_view`,
 *   `invalid_weights`, `invalid_cog`: malformed input (the `field` names the offending path);
 * - `facts_signature`: the facts signature does not verify, or is not by the node's own key;
 * - `facts_wrong_key`: facts signed by another key than the one held (or expected) for that node;
 * - `facts_stale`: a sequence number not higher than the one held;
 * - `facts_expired`: facts already past their TTL;
 * - `facts_from_future`: facts issued further ahead of the clock than the allowed skew;
 * - `self_asserted_tier`: facts that carry a trust tier (only the operator assigns one);
 * - `facts_cache_full`: the bounded facts cache holds no expired entry it could evict;
 * - `reservation_conflict`: a reservation would overcommit a node or claim a capability already held;
 * - `not_placed`: a decision that placed nothing was given where a placement was needed;
 * - `duplicate_node`, `unknown_node`, `unknown_reservation`, `unknown_route`.
 */
export type PlacementErrorCode =
  | 'invalid_capability'
  | 'invalid_requirement'
  | 'invalid_request'
  | 'invalid_facts'
  | 'invalid_view'
  | 'invalid_weights'
  | 'invalid_cog'
  | 'facts_signature'
  | 'facts_wrong_key'
  | 'facts_stale'
  | 'facts_expired'
  | 'facts_from_future'
  | 'self_asserted_tier'
  | 'facts_cache_full'
  | 'duplicate_node'
  | 'unknown_node'
  | 'unknown_reservation'
  | 'unknown_route'
  | 'reservation_conflict'
  | 'not_placed';

/** An error from `@heddle/placement`, with a stable {@link PlacementErrorCode}. */
export class PlacementError extends HeddleError {
  /** The stable code (narrowed). */
  declare readonly code: PlacementErrorCode;

  constructor(code: PlacementErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(code, message, options);
  }
}
