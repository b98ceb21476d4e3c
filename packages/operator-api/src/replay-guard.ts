import { ApiFailure } from './errors.js';

/** Options of a {@link ReplayGuard}. */
export interface ReplayGuardOptions {
  /** Largest accepted distance between a request's `ts` and the server's clock, in ms (default 60 000). */
  readonly skewMs?: number;
  /** Most nonces remembered at once (default 100 000): beyond, signed requests are refused `busy`. */
  readonly maxNonces?: number;
  /** The clock (Unix ms; default `Date.now`). */
  readonly now?: () => number;
}

/**
 * Refuses a signed request whose timestamp is outside the clock skew window (`stale_request`) or whose
 * key and nonce were seen within it (`replayed_request`). A nonce is remembered until its timestamp
 * leaves the window, after which a replay is refused as stale, so a captured request can never be
 * used twice.
 */
export class ReplayGuard {
  /** The accepted clock skew, in ms. */
  readonly skewMs: number;
  readonly #max: number;
  readonly #now: () => number;
  /** `key:nonce` to the time it may be forgotten. */
  readonly #seen = new Map<string, number>();

  constructor(options: ReplayGuardOptions = {}) {
    this.skewMs = options.skewMs ?? 60_000;
    this.#max = options.maxNonces ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  /** Nonces remembered now. */
  get size(): number {
    return this.#seen.size;
  }

  /** Refuses a timestamp outside the window (`stale_request`, 401). Does not remember anything. */
  checkTime(ts: number): void {
    const now = this.#now();
    if (Math.abs(now - ts) > this.skewMs) {
      throw new ApiFailure(
        'stale_request',
        `the request was signed at ${ts}, ${Math.round((now - ts) / 1000)} s from the controller's clock (at most ${this.skewMs / 1000} s either way): check the clock and sign again`,
        { field: 'authorization.ts' },
      );
    }
  }

  /**
   * Checks the time again, then remembers `key`'s `nonce`: refuses one already seen
   * (`replayed_request`, 401), or `busy` (503) when the guard is full.
   */
  remember(key: string, nonce: string, ts: number): void {
    this.checkTime(ts);
    const now = this.#now();
    this.#sweep(now);
    const id = `${key}:${nonce}`;
    if (this.#seen.has(id)) {
      throw new ApiFailure(
        'replayed_request',
        'this nonce was already used by this key: sign each request with a fresh nonce',
        {
          field: 'authorization.nonce',
        },
      );
    }
    if (this.#seen.size >= this.#max) {
      throw new ApiFailure(
        'busy',
        `too many signed requests within ${this.skewMs / 1000} s; try again shortly`,
      );
    }
    this.#seen.set(id, ts + this.skewMs);
  }

  #sweep(now: number): void {
    // Insertion order is nearly time order: drop expired entries from the front, stop at the first live one
    // (a few out-of-order ones are dropped on a later sweep).
    for (const [id, until] of this.#seen) {
      if (until >= now) break;
      this.#seen.delete(id);
    }
  }
}
