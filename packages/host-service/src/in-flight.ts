import type { InFlightDecision } from '@heddle/protocol';

/**
 * The decision ids of mutating requests being handled. A controller whose call was lost (an
 * indeterminate place) asks `status` and finds its decision here while the host is still working on
 * it, as an instance once it produced one, or nowhere when it did nothing (docs/protocol.md section 14.3).
 */
export class InFlight {
  readonly #open = new Map<number, InFlightDecision>();
  #next = 0;

  /** Marks `decisionId` in flight; call the returned function when done (idempotent). */
  enter(decisionId: string, method: string, now: number): () => void {
    const key = this.#next++;
    this.#open.set(key, { decision_id: decisionId, method, since_ms: now });
    return () => {
      this.#open.delete(key);
    };
  }

  /** The decisions in flight, oldest first (a decision re-sent while in flight appears twice). */
  list(): InFlightDecision[] {
    return [...this.#open.values()];
  }

  /** Number of requests in flight. */
  get size(): number {
    return this.#open.size;
  }

  /** True when `decisionId` is being handled. */
  has(decisionId: string): boolean {
    for (const d of this.#open.values()) if (d.decision_id === decisionId) return true;
    return false;
  }
}
