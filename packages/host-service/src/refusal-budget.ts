/** Default number of unauthenticated refusals chained per window: 16. */
export const DEFAULT_REFUSALS_PER_WINDOW = 16;
/** Default budget window: one minute. */
export const DEFAULT_REFUSAL_WINDOW_MS = 60_000;

/** Options of a {@link RefusalBudget}. */
export interface RefusalBudgetOptions {
  /** Refusals that may be chained per window (default 16). */
  readonly perWindow?: number;
  /** Window length in ms (default 60 s). */
  readonly windowMs?: number;
}

/**
 * Bounds how many refusals of unauthenticated requests reach the chain, so a flood of forged or
 * garbage requests cannot grow the audit chain without limit (about 16 a minute, docs/protocol.md section 14.5). The
 * window is fixed: it starts at the first refusal after the previous window ended. A refusal over
 * the budget is counted, not chained; the next one chained carries that count as `suppressed`.
 */
export class RefusalBudget {
  readonly #perWindow: number;
  readonly #windowMs: number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #used = 0;
  #suppressed = 0;

  constructor(options: RefusalBudgetOptions = {}) {
    this.#perWindow = options.perWindow ?? DEFAULT_REFUSALS_PER_WINDOW;
    this.#windowMs = options.windowMs ?? DEFAULT_REFUSAL_WINDOW_MS;
    if (!Number.isSafeInteger(this.#perWindow) || this.#perWindow < 1) {
      throw new TypeError('perWindow must be a positive integer');
    }
    if (!Number.isSafeInteger(this.#windowMs) || this.#windowMs < 1) {
      throw new TypeError('windowMs must be a positive integer');
    }
  }

  /**
   * Takes one unit at time `now` (Unix ms). Returns the number of refusals suppressed since the last
   * one chained (chain this refusal and carry that count), or undefined when the budget is spent
   * (do not chain; it is counted).
   */
  take(now: number): number | undefined {
    if (now - this.#windowStart >= this.#windowMs || now < this.#windowStart) {
      this.#windowStart = now;
      this.#used = 0;
    }
    if (this.#used >= this.#perWindow) {
      this.#suppressed++;
      return undefined;
    }
    this.#used++;
    const carried = this.#suppressed;
    this.#suppressed = 0;
    return carried;
  }

  /** Refusals counted but not chained since the last one chained. */
  get suppressed(): number {
    return this.#suppressed;
  }
}
