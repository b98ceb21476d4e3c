import { DEFAULT_NONCE_CAPACITY, MAX_CLOCK_SKEW_MS } from './limits.js';
import { MinHeap } from './min-heap.js';

/** Options of a {@link NonceGuard}. */
export interface NonceGuardOptions {
  /** Most nonces remembered at once (default 65,536). When full of unexpired nonces, it refuses. */
  readonly capacity?: number;
  /** Extra time a nonce is remembered after its request expires (default the 30 s clock skew). */
  readonly skewMs?: number;
  /**
   * Where nonces recorded `durable` are written before they count as recorded (a host's nonce
   * journal), so that a restart cannot forget them. Without it, `durable` changes nothing.
   */
  readonly journal?: NonceJournalSink;
}

/** Durable storage of accepted nonces (see {@link NonceGuardOptions.journal}). */
export interface NonceJournalSink {
  /**
   * Makes `nonce`, remembered until `rememberUntilMs`, durable before returning (write and fsync).
   * Throws when it cannot: the nonce is then not recorded and the request is refused.
   */
  append(nonce: string, rememberUntilMs: number): void;
}

/**
 * The answer of {@link NonceGuard.record}: `unavailable` when a durable record could not be written
 * to the journal (nothing was recorded; the host refuses, failing closed).
 */
export type NonceVerdict = 'recorded' | 'replay' | 'full' | 'unavailable';

/** Expiries are grouped into buckets of this many ms, so pruning handles one bucket at a time. */
const BUCKET_MS = 1000;

/**
 * Bounded replay memory. Each nonce is remembered until its request's expiry plus the clock skew
 * (rounded up to the next second), so a request cannot be accepted twice while it could still pass
 * the time-window check, even if the host's clock steps back by up to the skew. When the memory is
 * full of nonces that are still remembered, it fails closed: {@link NonceGuard.record} answers
 * `full` (the host refuses) rather than forgetting one early.
 *
 * Cost: a check is one map lookup; a record is O(1) plus an O(log b) heap push when it opens a new
 * one-second bucket (b, the live buckets, stays near 360 with the protocol's limits); pruning removes
 * whole buckets in expiry order, O(1) amortised per nonce. Time is an input: nothing here reads a clock.
 */
export class NonceGuard {
  /** Most nonces remembered at once. */
  readonly capacity: number;
  /** Extra time a nonce is remembered after its request's expiry, in ms. */
  readonly skewMs: number;
  readonly #bucketOf = new Map<string, number>();
  readonly #buckets = new Map<number, string[]>();
  readonly #order = new MinHeap();
  readonly #journal: NonceJournalSink | undefined;

  constructor(options: NonceGuardOptions = {}) {
    const capacity = options.capacity ?? DEFAULT_NONCE_CAPACITY;
    const skewMs = options.skewMs ?? MAX_CLOCK_SKEW_MS;
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be a positive integer');
    if (!Number.isSafeInteger(skewMs) || skewMs < 0)
      throw new RangeError('skewMs must be a non-negative integer');
    this.capacity = capacity;
    this.skewMs = skewMs;
    this.#journal = options.journal;
  }

  /** Number of nonces remembered now (expired ones included until the next prune). */
  get size(): number {
    return this.#bucketOf.size;
  }

  /** True when `nonce` is remembered. */
  has(nonce: string): boolean {
    return this.#bucketOf.has(nonce);
  }

  /**
   * Records `nonce` of a request expiring at `expiresAtMs`, at time `nowMs`: `recorded` the first time,
   * `replay` when it is remembered already, `full` when the memory holds `capacity` nonces that are
   * all still remembered (nothing is recorded then). Prunes forgotten nonces first. With `durable`
   * and a journal, the nonce is written to the journal first; `unavailable` when that failed (nothing
   * is recorded then either).
   */
  record(nonce: string, expiresAtMs: number, nowMs: number, durable = false): NonceVerdict {
    if (!Number.isSafeInteger(expiresAtMs) || !Number.isSafeInteger(nowMs)) {
      throw new TypeError('expiresAtMs and nowMs must be safe integers');
    }
    this.prune(nowMs);
    if (this.#bucketOf.has(nonce)) return 'replay';
    if (this.#bucketOf.size >= this.capacity) return 'full';
    const bucket = Math.ceil((expiresAtMs + this.skewMs) / BUCKET_MS);
    if (durable && this.#journal !== undefined) {
      try {
        this.#journal.append(nonce, bucket * BUCKET_MS);
      } catch {
        return 'unavailable';
      }
    }
    this.#insert(nonce, bucket);
    return 'recorded';
  }

  /**
   * Puts back a nonce a journal remembered (after a restart), until `rememberUntilMs`; ignored when
   * that time has passed at `nowMs` or the nonce is already remembered. May exceed `capacity` (what
   * was accepted stays remembered). Returns true when it was added.
   */
  restore(nonce: string, rememberUntilMs: number, nowMs: number): boolean {
    if (!Number.isSafeInteger(rememberUntilMs) || !Number.isSafeInteger(nowMs)) {
      throw new TypeError('rememberUntilMs and nowMs must be safe integers');
    }
    if (rememberUntilMs <= nowMs || this.#bucketOf.has(nonce)) return false;
    this.#insert(nonce, Math.ceil(rememberUntilMs / BUCKET_MS));
    return true;
  }

  /** Every nonce remembered now with the time it is remembered until (Unix ms), expiry order not guaranteed. */
  *entries(): IterableIterator<[nonce: string, rememberUntilMs: number]> {
    for (const [nonce, bucket] of this.#bucketOf) yield [nonce, bucket * BUCKET_MS];
  }

  #insert(nonce: string, bucket: number): void {
    let list = this.#buckets.get(bucket);
    if (!list) {
      list = [];
      this.#buckets.set(bucket, list);
      this.#order.push(bucket);
    }
    list.push(nonce);
    this.#bucketOf.set(nonce, bucket);
  }

  /**
   * Forgets every nonce whose remembrance ended at or before `nowMs` (expiry plus skew, rounded up to
   * the second). Returns how many were forgotten.
   */
  prune(nowMs: number): number {
    let removed = 0;
    for (;;) {
      const bucket = this.#order.peek();
      if (bucket === undefined || bucket * BUCKET_MS > nowMs) return removed;
      this.#order.pop();
      const list = this.#buckets.get(bucket);
      this.#buckets.delete(bucket);
      if (!list) continue;
      for (const nonce of list) this.#bucketOf.delete(nonce);
      removed += list.length;
    }
  }
}
