/**
 * Why verification failed:
 *
 * - `malformed`: an event (or file record) is not well-formed: unparseable, a missing or mistyped field,
 *   not in canonical form. `field` names the field when there is one.
 * - `payload_hash_mismatch`: the payload does not hash to `payload_hash` (the payload was edited).
 * - `hash_mismatch`: the header fields do not hash to `hash` (seq, ts, source, kind, payload_hash,
 *   prev_hash or hash was edited).
 * - `reordered`: the event's seq is not the next one and the expected seq occurs elsewhere (moved,
 *   swapped or duplicated events).
 * - `dropped`: the event's seq is beyond the next one and the expected seq occurs nowhere later (events
 *   removed).
 * - `broken_link`: `prev_hash` is not the previous event's hash (an earlier event was rewritten with a
 *   recomputed hash, or replaced).
 * - `torn_tail`: the last record of a file is incomplete or unparseable (an interrupted write).
 * - `truncated`: the chain has fewer events than the checkpoint it is checked against.
 * - `checkpoint_mismatch`: the head hash or Merkle root at the checkpoint's size differs from the
 *   checkpoint's (history rewritten).
 */
export type VerifyReason =
  | 'malformed'
  | 'payload_hash_mismatch'
  | 'hash_mismatch'
  | 'reordered'
  | 'dropped'
  | 'broken_link'
  | 'torn_tail'
  | 'truncated'
  | 'checkpoint_mismatch';

/** The first problem verification found. */
export interface VerifyFailure {
  /** What broke. */
  readonly reason: VerifyReason;
  /** The position (expected seq) of the first bad event; for `truncated`, the first missing seq. */
  readonly seq: number;
  /** A sentence for people, naming the event and what broke. */
  readonly message: string;
  /** For `malformed`: the field at fault, when known. */
  readonly field?: string;
  /** For files: 1-based line number of the record (line 1 is the file header). */
  readonly line?: number;
  /** For files: byte offset of the start of the record. */
  readonly offset?: number;
}

/** The result of verifying a chain. */
export interface VerifyResult {
  /** True when every event verified (and the checkpoint, if one was given, matched). */
  readonly ok: boolean;
  /** Length of the leading run of events that are well-formed and correctly linked. */
  readonly size: number;
  /** Hash of the last event of that run (64 zeros when it is empty). */
  readonly head: string;
  /** The first failure, or null when `ok`. */
  readonly failure: VerifyFailure | null;
}

/**
 * What a chain can be checked against: a size and the head hash at that size, optionally the Merkle
 * root at that size. A verified `Checkpoint` is one.
 */
export interface CheckpointAnchor {
  /** Number of events covered. */
  readonly size: number;
  /** Hash of event `size - 1` (64 zeros for size 0). */
  readonly head: string;
  /** Merkle root over the first `size` event hashes (64 hex), when it is to be checked too. */
  readonly root?: string;
}

/** Options of the verification functions. */
export interface VerifyOptions {
  /** Also check the chain against this checkpoint: detects truncation and rewritten history. */
  readonly checkpoint?: CheckpointAnchor;
}
