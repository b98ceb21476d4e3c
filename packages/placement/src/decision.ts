import type { RequestVariant } from './request.js';
import type { RequirementReason } from './requirement.js';
import type { ReservationInput } from './state.js';
import type { ViewNode } from './view.js';
import type { ExecutionTier } from './vocabulary.js';
import type { ScoringWeights } from './weights.js';

/** Phase A constraints, in the order they are checked. */
export const CONSTRAINTS = [
  'unknown_node',
  'revoked_node',
  'liveness',
  'facts_expired',
  'tier',
  'cordoned',
  'labels',
  'workload_revoked',
  'co_residency',
  'memory',
  'cpu',
  'requirements',
  'emulation',
  'governance',
] as const;
/** One of {@link CONSTRAINTS}. */
export type ConstraintName = (typeof CONSTRAINTS)[number];

/** One failed constraint on one node. */
export interface ConstraintFailure {
  /** Which constraint. */
  readonly constraint: ConstraintName;
  /** What failed, for people. */
  readonly detail: string;
  /** For `requirements` and `emulation`: the variant (its name). */
  readonly variant?: string;
  /**
   * For `requirements`: the alternative of the variant that failed so (`linux`, `macos`, ...), absent
   * when every alternative of the variant failed for the same reason (one line stands for them all).
   */
  readonly alternative?: string;
  /** For `requirements`: the first requirement of that variant not met (`cpu.arch.aarch64`). */
  readonly requirement?: string;
  /** For `requirements`: the stable reason code (`no_such_id`, ...); `detail` says it in words. */
  readonly reason?: RequirementReason;
}

/** A node refused in phase A, with every constraint it failed. */
export interface NodeRejection {
  /** Node id. */
  readonly node_id: string;
  /** Failed constraints (all of them, in check order). */
  readonly failures: readonly ConstraintFailure[];
}

/** Phase B score parts (their sum is the score). */
export interface ScoreParts {
  /** Execution tier weight. */
  readonly execution: number;
  /** Prefer/avoid affinity. */
  readonly affinity: number;
  /** Accelerator fit. */
  readonly accelerator_fit: number;
  /** Measured performance. */
  readonly measured_performance: number;
  /** Low load. */
  readonly load: number;
  /** Ran there before. */
  readonly stickiness: number;
  /** Spread across a label. */
  readonly spread: number;
}

/** A node that passed phase A, with its score. */
export interface ScoredCandidate {
  /** Node id. */
  readonly node_id: string;
  /** Variant it would run. */
  readonly variant: string;
  /** How it would run it. */
  readonly execution: ExecutionTier;
  /** Total score. */
  readonly score: number;
  /** Parts of the score. */
  readonly parts: ScoreParts;
}

/** A governance verdict for one node (from `@heddle/gate` or any other source the caller uses). */
export type GovernanceVerdict =
  | { readonly verdict: 'permit' }
  | { readonly verdict: 'deny'; readonly reason: string; readonly rule?: string }
  | { readonly verdict: 'defer'; readonly reason: string };

/**
 * Governance input: verdicts by node id (a node missing from it is refused), or a function asked for
 * each node that passes every other constraint, with the variant that would run there.
 */
export type GovernanceInput =
  | ReadonlyMap<string, GovernanceVerdict>
  | Readonly<Record<string, GovernanceVerdict>>
  | ((nodeId: string, variant: RequestVariant, node: ViewNode) => GovernanceVerdict);

/** What every decision carries. */
export interface DecisionCommon {
  /** Workload placed. */
  readonly workload: string;
  /** The time the decision was made at (an input). */
  readonly now_ms: number;
  /** Nodes in the view. */
  readonly nodes_total: number;
  /** Nodes phase A evaluated. */
  readonly nodes_evaluated: number;
  /** True when scoring stopped at `max_candidates` feasible nodes (see the sampling rule). */
  readonly sampled: boolean;
  /** Nodes that passed phase A and were scored, best first (only the chosen one in summary detail). */
  readonly candidates: readonly ScoredCandidate[];
  /** Evaluated nodes refused in phase A (every node when unplaceable; none in summary detail). */
  readonly rejected: readonly NodeRejection[];
  /** How many evaluated nodes failed each constraint (a node counts once per failed constraint). */
  readonly rejected_by_constraint: Readonly<Partial<Record<ConstraintName, number>>>;
  /** Governance verdicts were supplied and applied. */
  readonly governance_checked: boolean;
  /** The weights used. */
  readonly weights: ScoringWeights;
}

/** The workload was placed. */
export interface PlacedDecision extends DecisionCommon {
  /** Outcome. */
  readonly outcome: 'placed';
  /** Chosen node. */
  readonly node_id: string;
  /** Variant it runs. */
  readonly variant: string;
  /** How it runs it. */
  readonly execution: ExecutionTier;
  /** Its score. */
  readonly score: number;
  /** It was pinned (scoring did not choose it). */
  readonly pinned: boolean;
  /** What to reserve so later decisions see it taken (`PlacementState.reserve`). */
  readonly reservation: ReservationInput;
}

/** No node passed phase A: `rejected` holds every node's reasons. */
export interface UnplaceableDecision extends DecisionCommon {
  /** Outcome. */
  readonly outcome: 'unplaceable';
  /** Summary for people. */
  readonly reason: string;
}

/** The request pinned a node that is unknown or fails phase A. */
export interface PinRefusedDecision extends DecisionCommon {
  /** Outcome. */
  readonly outcome: 'pin_refused';
  /** The pinned node. */
  readonly node_id: string;
  /** Its failed constraints. */
  readonly failures: readonly ConstraintFailure[];
  /** The error, naming the failed constraints. */
  readonly error: { readonly code: 'pin_ineligible' | 'unknown_node'; readonly message: string };
}

/** The result of `place`. */
export type Decision = PlacedDecision | UnplaceableDecision | PinRefusedDecision;
