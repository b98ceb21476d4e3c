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

  constructor(deadAfterMs: number) {
    this.#deadAfterMs = deadAfterMs;
  }

  /** A check (or any call) was answered at `nowMs`. */
  contact(nodeId: string, nowMs: number): void {
    const r = this.#get(nodeId);
    r.lastContact = Math.max(r.lastContact, nowMs);
    r.downSince = -1;
  }

  /** A check failed at `nowMs` (the node is down from its first failure since an answer). */
  failure(nodeId: string, nowMs: number): void {
    const r = this.#get(nodeId);
    if (r.downSince < 0) r.downSince = nowMs;
  }

  /** Forgets a node. */
  forget(nodeId: string): void {
    this.#nodes.delete(nodeId);
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
