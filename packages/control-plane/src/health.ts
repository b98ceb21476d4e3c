import { type Liveness, livenessAt } from '@heddle/placement';

// Health checks of the nodes (issue 15 item 10): each node's check is bounded on its own, checks run
// in parallel with bounded concurrency, and a node's liveness follows its own checks only. A slow or
// frozen node (one that accepts connections and never answers) costs its own check the health
// timeout and nothing else: the other nodes are not judged silent because the controller was busy.

/**
 * Liveness from the controller's own checks: `unknown` before any answer, `alive` while the last check
 * was answered, `suspect` from the first failed check, `dead` once checks have failed for
 * `deadAfterMs`. Unlike a silence rule, a node is never suspected because the controller did not ask
 * it (a tick that took long because another node stalled). Time is always an argument.
 */
export class CheckedLiveness {
  readonly #nodes = new Map<string, { lastContact: number; downSince: number }>();
  readonly #deadAfterMs: number;
  readonly #listeners: ((nodeId: string) => void)[] = [];

  constructor(deadAfterMs: number) {
    this.#deadAfterMs = deadAfterMs;
  }

  /**
   * Calls `listener` with the node id whenever a node's liveness may have changed by an event (its
   * first answer, an answer after failures, its first failure, or being forgotten); an answer from a
   * node already answering changes nothing and calls nothing. Changes that time alone brings are
   * told by {@link changesAt}.
   */
  watch(listener: (nodeId: string) => void): void {
    this.#listeners.push(listener);
  }

  /** A check (or any call) was answered at `nowMs`. */
  contact(nodeId: string, nowMs: number): void {
    const r = this.#get(nodeId);
    const changed = r.downSince >= 0 || r.lastContact < 0;
    r.lastContact = Math.max(r.lastContact, nowMs);
    r.downSince = -1;
    if (changed) this.#tell(nodeId);
  }

  /** A check failed at `nowMs` (the node is down from its first failure since an answer). */
  failure(nodeId: string, nowMs: number): void {
    const r = this.#get(nodeId);
    if (r.downSince >= 0) return;
    r.downSince = nowMs;
    this.#tell(nodeId);
  }

  /**
   * What another controller sharing the state recorded of `nodeId` (its target's `last_seen_ms`, or
   * its `unreachable_since_ms`), taken only when newer than what this tracker knows: an answer after
   * this tracker's own latest failure, or a failure after its own latest answer.
   */
  observed(nodeId: string, seen: { readonly contactMs: number } | { readonly downSinceMs: number }): void {
    const r = this.#get(nodeId);
    if ('contactMs' in seen) {
      if (seen.contactMs > r.lastContact && (r.downSince < 0 || seen.contactMs > r.downSince))
        this.contact(nodeId, seen.contactMs);
    } else if (r.downSince < 0 && seen.downSinceMs > r.lastContact) this.failure(nodeId, seen.downSinceMs);
  }

  /** Forgets a node. */
  forget(nodeId: string): void {
    if (this.#nodes.delete(nodeId)) this.#tell(nodeId);
  }

  /**
   * When the liveness of `nodeId` will change with no further event (a failing node turns dead
   * `deadAfterMs` after its first failure), or undefined when it will not (Unix ms).
   */
  changesAt(nodeId: string, nowMs: number): number | undefined {
    const r = this.#nodes.get(nodeId);
    if (r === undefined || r.downSince < 0) return undefined;
    const at = r.downSince + this.#deadAfterMs;
    return at > nowMs ? at : undefined;
  }

  #tell(nodeId: string): void {
    for (const l of this.#listeners) l(nodeId);
  }

  /** The liveness of `nodeId` at `nowMs`. */
  get(nodeId: string, nowMs: number): Liveness {
    const r = this.#nodes.get(nodeId);
    if (r === undefined) return 'unknown';
    // Silence does not count: judged at its last contact while its checks are answered.
    const at = r.downSince < 0 && r.lastContact >= 0 ? r.lastContact : nowMs;
    return livenessAt(r.lastContact, r.downSince, at, this.#deadAfterMs, this.#deadAfterMs);
  }

  #get(nodeId: string): { lastContact: number; downSince: number } {
    let r = this.#nodes.get(nodeId);
    if (r === undefined) {
      r = { lastContact: -1, downSince: -1 };
      this.#nodes.set(nodeId, r);
    }
    return r;
  }
}

/** Rejects with `Error(message)` when `promise` has not settled within `ms` (the promise runs on). */
export function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Runs `fn` on every item, at most `concurrency` at a time; resolves with the results in order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      // cast: i < items.length: the element exists (noUncheckedIndexedAccess cannot see it)
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}
