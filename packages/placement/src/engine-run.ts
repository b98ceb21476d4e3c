import {
  CONSTRAINTS,
  type ConstraintFailure,
  type ConstraintName,
  type DecisionCommon,
  type NodeRejection,
  type ScoredCandidate,
} from './decision.js';
import type { EvalContext } from './evaluate.js';
import type { PreparedRequest } from './prepare.js';
import type { PlacementRequest, RequestVariant } from './request.js';
import { checkRequirement } from './requirement.js';
import { type MutableParts, newParts, type ScoreContext, scoreNode } from './score.js';
import type { PlacementState, ReservationInput } from './state.js';
import type { PlacementView, ViewNode } from './view.js';
import type { ScoringWeights } from './weights.js';

/** Everything one decision reads, shared by the engine's phases. @internal */
export interface Run {
  /** The frozen copy of the request (from its digest). */
  readonly request: PlacementRequest;
  readonly prep: PreparedRequest;
  readonly view: PlacementView;
  readonly state: PlacementState;
  readonly now: number;
  readonly weights: ScoringWeights;
  readonly governanceChecked: boolean;
  /** Record every candidate and every rejection (`detail: 'full'`). */
  readonly full: boolean;
  readonly ctx: EvalContext;
  readonly sctx: ScoreContext;
  /** Rejections per constraint (indexed as CONSTRAINTS). */
  readonly counts: Int32Array;
}

/** Marks a node already in the candidate list (in the scratch result). */
export const ADDED: number = 1 << 20;
/** Extracts the variant index from a scratch result. */
export const VARIANT_MASK = 0xffff;

const scratchParts: MutableParts = newParts();

/** The fields every decision has. */
export function common(
  run: Run,
  evaluated: number,
  sampled: boolean,
  candidates: readonly ScoredCandidate[],
  rejected: readonly NodeRejection[],
): DecisionCommon {
  return {
    workload: run.request.workload,
    now_ms: run.now,
    nodes_total: run.view.nodes.length,
    nodes_evaluated: evaluated,
    sampled,
    candidates,
    rejected,
    rejected_by_constraint: countsObject(run.counts),
    governance_checked: run.governanceChecked,
    weights: run.weights,
  };
}

// cast: Object.fromEntries types its keys as string; every ConstraintName is mapped
const CONSTRAINT_INDEX: Readonly<Record<ConstraintName, number>> = Object.fromEntries(
  CONSTRAINTS.map((c, i) => [c, i]),
) as Record<ConstraintName, number>;

/**
 * Counts a rejected node once under each constraint it failed, however many lines it has for one
 * (a node failing `requirements` for four variants counts 1 under `requirements`).
 */
export function countFailures(counts: Int32Array, failures: readonly ConstraintFailure[]): void {
  let seen = 0; // one bit per constraint (CONSTRAINTS has fewer than 32)
  for (const f of failures) {
    const i = CONSTRAINT_INDEX[f.constraint];
    if ((seen & (1 << i)) !== 0) continue;
    seen |= 1 << i;
    counts[i]!++;
  }
}

/** The non-zero counts as an object by constraint name. */
export function countsObject(counts: Int32Array): Partial<Record<ConstraintName, number>> {
  const out: Partial<Record<ConstraintName, number>> = {};
  for (let i = 0; i < counts.length; i++) if (counts[i]! > 0) out[CONSTRAINTS[i]!] = counts[i]!;
  return out;
}

/** Phase B score of `node` running ordered variant `v`, with its parts (a fresh object). */
export function candidate(ctx: ScoreContext, node: ViewNode, v: number): ScoredCandidate {
  const score = scoreNode(ctx, node, v, scratchParts);
  return {
    node_id: node.node_id,
    variant: ctx.prep.variants[v]!.name,
    execution: ctx.prep.variants[v]!.execution,
    score,
    parts: { ...scratchParts },
  };
}

/** Phase B score only (no allocation). */
export function scoreOnly(ctx: ScoreContext, node: ViewNode, v: number): number {
  return scoreNode(ctx, node, v, scratchParts);
}

/** What placing the request on `node` with `variant` takes (resources and exclusive claims). */
export function reservationFor(run: Run, node: ViewNode, variant: RequestVariant): ReservationInput {
  const { request, prep, state } = run;
  const claims: string[] = [];
  const held = state.usage(node.node_id)?.claims;
  const matched: string[] = [];
  for (const req of variant.requirements) {
    matched.length = 0;
    checkRequirement(req, node, held, matched);
    for (const id of matched)
      if ((req.exclusive === true || node.capById.get(id)?.exclusive === true) && !claims.includes(id))
        claims.push(id);
  }
  return {
    node_id: node.node_id,
    workload: request.workload,
    ...(request.package_id === undefined ? {} : { package_id: request.package_id }),
    memory_mb: prep.memory_mb,
    accel_memory_mb: prep.accel_memory_mb,
    cpu_pct: prep.cpu_pct,
    claims,
    labels: node.labels,
    ...(prep.exclude.length === 0 ? {} : { excludes: prep.exclude }),
  };
}
