// What a network fault kind is (one file per kind in this folder, listed in index.ts): it plans its
// targets and parameters from the trial's seeded generator, applies itself, holds (probing from the
// controller's namespace that it is in force), lifts itself, and returns a record of when it took
// effect, when it was lifted, and the evidence that it landed in that window. Kinds compose: faults
// on the fabric are reference-counted, so two kinds may hold the same link or drop at once.
import type { Rng } from '../../rng.js';
import type { NetCluster } from '../net-cluster.js';

/** What a fault is given. */
export interface FaultContext {
  readonly cluster: NetCluster;
  readonly rng: Rng;
  /** How long the fault holds, ms (the trial draws it; a kind may shorten it, never lengthen it). */
  readonly holdMs: number;
  /** Hosts the trial leaves to this fault (the kind picks among them). */
  readonly candidates: readonly number[];
  note(line: string): void;
}

/** What a fault did: when, to whom, and the proof it landed inside its window. */
export interface FaultRecord {
  readonly kind: string;
  /** The hosts it hit. */
  readonly targets: readonly number[];
  /** Its parameters, for the report. */
  readonly params: string;
  /** When it took effect (epoch ms: after the command that applies it returned). */
  readonly appliedAt: number;
  /** When it was lifted (epoch ms: before the command that lifts it ran). */
  readonly liftedAt: number;
  /** Whether the evidence shows it in force inside [appliedAt, liftedAt]. */
  readonly landed: boolean;
  readonly evidence: string;
}

/** One kind of network fault. */
export interface NetFaultKind {
  /** A short stable name (`partition-both`, `flap`, ...): the soak's table counts by it. */
  readonly name: string;
  /** What it does, for test names and docs. */
  readonly title: string;
  /** Applies, holds and lifts the fault; never leaves it applied (lifts in a finally). */
  run(ctx: FaultContext): Promise<FaultRecord>;
}
