import type { Liveness } from './vocabulary.js';

/** Options of {@link LivenessTracker}. */
export interface LivenessOptions {
  /** Silence after the last contact before an alive node counts as `suspect` (default 15 s). */
  readonly suspectAfterMs?: number;
  /** How long a node may stay unreachable (or silent) before it counts as `dead` (default 30 s). */
  readonly deadAfterMs?: number;
}

interface Record_ {
  lastContact: number;
  downSince: number; // -1 when the last attempt succeeded
  override: Liveness | undefined;
}

/**
 * Liveness from contact: a node never contacted is `unknown`; a successful contact makes it `alive`;
 * a failed contact, or silence longer than `suspectAfterMs`, makes it `suspect`; unreachable or silent
 * for longer than `deadAfterMs`, `dead`. A membership layer may override a node's liveness (it decides
 * first, as in the reference design). Time is always an argument: the tracker reads no clock.
 */
export class LivenessTracker {
  readonly #nodes = new Map<string, Record_>();
  readonly #suspectAfter: number;
  readonly #deadAfter: number;

  constructor(options: LivenessOptions = {}) {
    this.#suspectAfter = options.suspectAfterMs ?? 15_000;
    this.#deadAfter = options.deadAfterMs ?? 30_000;
    if (!(this.#deadAfter >= this.#suspectAfter && this.#suspectAfter >= 0)) {
      throw new RangeError('need 0 <= suspectAfterMs <= deadAfterMs');
    }
  }

  /** Records a successful contact at `now_ms` (clears a failure streak). */
  contact(nodeId: string, now_ms: number): void {
    const r = this.#get(nodeId);
    r.lastContact = Math.max(r.lastContact, now_ms);
    r.downSince = -1;
  }

  /** Records a failed contact at `now_ms`; the node is down from its first failure since a success. */
  failure(nodeId: string, now_ms: number): void {
    const r = this.#get(nodeId);
    if (r.downSince < 0) r.downSince = now_ms;
  }

  /** Sets (or with `undefined` clears) an override from membership, which wins over contact. */
  override(nodeId: string, liveness: Liveness | undefined): void {
    this.#get(nodeId).override = liveness;
  }

  /** Forgets a node. */
  forget(nodeId: string): void {
    this.#nodes.delete(nodeId);
  }

  /** The liveness of `nodeId` at `now_ms`. */
  get(nodeId: string, now_ms: number): Liveness {
    const r = this.#nodes.get(nodeId);
    if (r === undefined) return 'unknown';
    if (r.override !== undefined) return r.override;
    return livenessAt(r.lastContact, r.downSince, now_ms, this.#suspectAfter, this.#deadAfter);
  }

  #get(nodeId: string): Record_ {
    let r = this.#nodes.get(nodeId);
    if (r === undefined) {
      r = { lastContact: -1, downSince: -1, override: undefined };
      this.#nodes.set(nodeId, r);
    }
    return r;
  }
}

/**
 * Pure liveness rule: `lastContactMs` (or -1 if never), `downSinceMs` (first failure since the last
 * success, or -1), the time, and the two thresholds.
 */
export function livenessAt(
  lastContactMs: number,
  downSinceMs: number,
  now_ms: number,
  suspectAfterMs: number,
  deadAfterMs: number,
): Liveness {
  if (downSinceMs >= 0) {
    if (now_ms - downSinceMs >= deadAfterMs) return 'dead';
    return lastContactMs < 0 ? 'unknown' : 'suspect';
  }
  if (lastContactMs < 0) return 'unknown';
  const silent = now_ms - lastContactMs;
  if (silent >= deadAfterMs) return 'dead';
  if (silent >= suspectAfterMs) return 'suspect';
  return 'alive';
}
