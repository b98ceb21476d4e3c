import type { TornTail } from './file-format.js';

/** Options of a chain. */
export interface ChainOptions {
  /** Milliseconds since the epoch, an integer (default `Date.now`). */
  readonly clock?: () => number;
  /**
   * Keep at most this many durable events in memory (the newest, at least; the window is cut when it
   * holds twice as many); older ones are read back from the store when asked for (`get`, `range`,
   * `find`, iteration, `verify`, proofs), which must then support `readEvent` (the file store does).
   * The indexes (by hash, source and kind) and every event's hash (32 bytes, for the Merkle tree) stay
   * in memory. Default: every event is kept in memory.
   */
  readonly retainEvents?: number;
}

/** What a chain tells its observers of one append, once it settled (see `Chain.observe`). */
export interface AppendObservation {
  readonly source: string;
  readonly kind: string;
  /** The payload as given to `append` (read it, never change it). */
  readonly payload: unknown;
  /** Milliseconds from the call of `append` until the event was durable (or the append failed). */
  readonly ms: number;
  /** False when the append was refused or its write failed. */
  readonly ok: boolean;
}

/** What opening a chain found. */
export interface OpenReport {
  /** The torn tail found (repaired unless the chain is read-only), or null. */
  readonly tornTail: TornTail | null;
  /** True when the store did not exist and was created. */
  readonly created: boolean;
}

/** A filter for {@link Chain.find}. All given conditions must hold. */
export interface EventQuery {
  /** Only events of this source. */
  readonly source?: string;
  /** Only events of this kind. */
  readonly kind?: string;
  /** Only seq >= from (default 0). */
  readonly from?: number;
  /** Only seq < to (default: the chain's size). */
  readonly to?: number;
  /** At most this many events (the first ones). */
  readonly limit?: number;
}

/** An inclusion proof of one event in the tree of the first `size` events. */
export interface InclusionProof {
  /** The event's seq (its leaf index). */
  readonly seq: number;
  /** Tree size the proof is for. */
  readonly size: number;
  /** The event hash (the leaf data), 64 hex. */
  readonly leaf: string;
  /** The audit path, bottom-up, 64 hex each. */
  readonly path: readonly string[];
  /** The Merkle root at `size` (compare it with a trusted root, e.g. a checkpoint's). */
  readonly root: string;
}

/** A consistency proof between the trees of the first `size1` and `size2` events. */
export interface ConsistencyProof {
  readonly size1: number;
  readonly size2: number;
  /** Merkle root at size1. */
  readonly root1: string;
  /** Merkle root at size2. */
  readonly root2: string;
  /** The proof nodes, 64 hex each. */
  readonly path: readonly string[];
}
