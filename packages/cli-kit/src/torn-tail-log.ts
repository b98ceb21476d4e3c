import type { Logger } from './logger.js';

/** What a daemon reports of a torn chain tail (the fields of `@heddle/chain`'s `TornTail` it logs). */
export interface TornTailNotice {
  /** Byte offset where the torn record starts. */
  readonly offset: number;
  /** Number of bytes cut off. */
  readonly length: number;
  /** The seq the torn record would have had. */
  readonly seq: number;
  /** What is wrong with it. */
  readonly reason: string;
  /** Where the bytes were quarantined, when they were. */
  readonly savedTo?: string | undefined;
}

/**
 * Warns, loudly, when opening a daemon's chain cut off a torn tail (its bytes were quarantined first,
 * never dropped silently); does nothing for `null`. Both daemons call it right after opening their chain.
 */
export function logTornTail(tornTail: TornTailNotice | null, log: Logger): void {
  if (tornTail === null) return;
  log.warn('the chain had a torn tail: its bytes were quarantined, not dropped', {
    offset: tornTail.offset,
    bytes: tornTail.length,
    seq: tornTail.seq,
    reason: tornTail.reason,
    saved_to: tornTail.savedTo ?? null,
  });
}
