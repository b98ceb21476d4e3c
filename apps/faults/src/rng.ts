/**
 * A small seeded pseudo-random generator (mulberry32) for the fault-injection trials: every choice a
 * trial makes (which host, when to kill, which proxy mode, how long) comes from one of these, so a
 * seed replays the same trial. Not for anything that needs real randomness.
 */
export class Rng {
  readonly #seed: number;
  #state: number;

  /** A generator for `seed` (any integer; taken modulo 2^32). */
  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
    this.#seed = seed;
    this.#state = seed >>> 0;
  }

  /** The seed this generator started from. */
  get seed(): number {
    return this.#seed;
  }

  /** The next number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number {
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max < min) {
      throw new RangeError(`int(${min}, ${max}): expected integers with min <= max`);
    }
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** One element of `items` (which must not be empty). */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick: no items');
    // cast: the index is in 0..length-1 of a list checked non-empty above.
    return items[this.int(0, items.length - 1)] as T;
  }

  /** True with probability `p` (0..1). */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A generator derived from this one (for a sub-task that must not shift this one's sequence). */
  fork(): Rng {
    return new Rng(this.int(0, 0x7fff_ffff));
  }
}

/** A fresh seed from the clock and Math.random (for soak runs; printed so the run can be replayed). */
export function randomSeed(): number {
  return (Date.now() ^ Math.floor(Math.random() * 0x7fff_ffff)) & 0x7fff_ffff;
}

/** The command that reruns one trial with `seed` (printed with every failure). */
export function rerunHint(seed: number): string {
  return `HEDDLE_FAULT_SEED=${seed} npx vitest run apps/faults`;
}
