import {
  CONSTRAINTS,
  type ConstraintFailure,
  type Decision,
  type GovernanceInput,
  type NodeRejection,
  type ScoredCandidate,
} from './decision.js';
import { placePinned } from './engine-pin.js';
import {
  candidate,
  common,
  countFailures,
  countsObject,
  type Run,
  reservationFor,
  scoreOnly,
  VARIANT_MASK,
} from './engine-run.js';
import { scanPhaseA } from './engine-scan.js';
import { PlacementError } from './errors.js';
import { type EvalContext, evaluateNode } from './evaluate.js';
import { prepareRequest } from './prepare.js';
import type { PlacementRequest } from './request.js';
import type { ScoreContext } from './score.js';
import type { PlacementState } from './state.js';
import type { EngineScratch, PlacementView } from './view.js';
import { DEFAULT_WEIGHTS, type ScoringWeights } from './weights.js';

/** Default bound on the feasible nodes scored per decision once sampling applies (docs/placement.md). */
export const DEFAULT_MAX_CANDIDATES = 32;

/**
 * Default fleet size above which the engine samples: with at most this many nodes in the view every
 * feasible node is scored (exact ordering).
 */
export const DEFAULT_SAMPLE_ABOVE_NODES = 1000;

/** Inputs of {@link place} besides the request, the view and the state. */
export interface PlaceOptions {
  /** The time of the decision (Unix ms). The engine reads no clock. */
  readonly now_ms: number;
  /** Weights (missing ones take {@link DEFAULT_WEIGHTS}). */
  readonly weights?: Partial<ScoringWeights>;
  /**
   * Governance verdicts per node (placement never calls a gate itself). Absent: not checked, and the
   * decision says so (`governance_checked: false`).
   */
  readonly governance?: GovernanceInput;
  /**
   * When sampling applies (see `sample_above_nodes`): stop after this many feasible nodes of the best
   * execution tier and score only those, plus the sticky and preferred ones (default 32; `Infinity`
   * scores every feasible node).
   */
  readonly max_candidates?: number;
  /**
   * Sample only when the view holds more than this many nodes (default 1,000; `0` samples every
   * fleet, `Infinity` never samples). At or below it every feasible node is scored.
   */
  readonly sample_above_nodes?: number;
  /**
   * `full` (default): every scored candidate and every evaluated node's failures are in the decision.
   * `summary`: only the chosen candidate and counts per constraint (an unplaceable decision still
   * lists every node's reasons).
   */
  readonly detail?: 'full' | 'summary';
}

const weightCache = new WeakMap<Partial<ScoringWeights>, ScoringWeights>();

function weightsOf(w: Partial<ScoringWeights> | undefined): ScoringWeights {
  if (w === undefined) return DEFAULT_WEIGHTS;
  let full = weightCache.get(w);
  if (full === undefined) {
    full = Object.freeze({ ...DEFAULT_WEIGHTS, ...w });
    weightCache.set(w, full);
  }
  return full;
}

function invalid(field: string, message: string): PlacementError {
  return new PlacementError('invalid_request', `invalid request: ${field}: ${message}`, { field });
}

function checkInputs(request: PlacementRequest, options: PlaceOptions): void {
  const now = options?.now_ms;
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new PlacementError('invalid_request', 'invalid request: now_ms must be a finite number', {
      field: 'now_ms',
    });
  }
  if (
    request === null ||
    typeof request !== 'object' ||
    !Array.isArray(request.variants) ||
    request.variants.length === 0
  ) {
    throw invalid('variants', 'at least one variant is required');
  }
  if (!((options.max_candidates ?? DEFAULT_MAX_CANDIDATES) >= 1)) {
    throw new PlacementError('invalid_request', 'invalid request: max_candidates must be at least 1', {
      field: 'max_candidates',
    });
  }
  if (!((options.sample_above_nodes ?? 0) >= 0)) {
    throw new PlacementError('invalid_request', 'invalid request: sample_above_nodes must be at least 0', {
      field: 'sample_above_nodes',
    });
  }
}

/**
 * The placement engine: a pure function of the request, the view, the state and the options (time is
 * an option; no I/O, no clock, no randomness, and the same decision whatever order the nodes were
 * given in). Phase A checks each node's hard constraints (revoked node, liveness, expired facts, trust
 * tier, revoked workload, co-residency, memory, CPU, the requirements of the best variant it can run,
 * emulation, governance); phase B scores the survivors of the best execution tier; the winner is the
 * highest score, ties broken by node id. A pin bypasses scoring but never the constraints. On a fleet
 * of more than `sample_above_nodes` nodes it scores at most `max_candidates` feasible nodes, found by
 * scanning the capability index from a start derived from the workload and the state's generation,
 * plus the sticky and preferred ones (see docs/placement.md). The request is read through a digest of
 * its content, so mutating a request object between calls is safe; so is calling `place` on the same
 * view from a governance callback.
 */
export function place(
  request: PlacementRequest,
  view: PlacementView,
  state: PlacementState,
  options: PlaceOptions,
): Decision {
  checkInputs(request, options);
  const prep = prepareRequest(request);
  const req = prep.request;
  const weights = weightsOf(options.weights);
  const ctx: EvalContext = {
    prep,
    state,
    now: options.now_ms,
    workload: req.workload,
    workloadRevoked: req.package_id !== undefined && state.isPackageRevoked(req.package_id),
    allowEmulation: req.allow_emulation === true,
    governance: options.governance,
  };
  const sctx: ScoreContext = { request: req, prep, state, weights };
  const run: Run = {
    request: req,
    prep,
    view,
    state,
    now: options.now_ms,
    weights,
    governanceChecked: options.governance !== undefined,
    full: options.detail !== 'summary',
    ctx,
    sctx,
    counts: new Int32Array(CONSTRAINTS.length),
  };
  if (req.pin !== undefined) return placePinned(run, req.pin);
  const sampleAbove = options.sample_above_nodes ?? DEFAULT_SAMPLE_ABOVE_NODES;
  const limit =
    view.nodes.length > sampleAbove
      ? (options.max_candidates ?? DEFAULT_MAX_CANDIDATES)
      : Number.POSITIVE_INFINITY;
  const scratch = view.acquireScratch();
  try {
    return decide(run, scratch, limit);
  } finally {
    view.releaseScratch(scratch);
  }
}

function decide(run: Run, scratch: EngineScratch, limit: number): Decision {
  const { candCount, evaluated, sampled, rejected, missing } = scanPhaseA(run, scratch, limit);
  // Above the sampling threshold an unplaceable request the index already answers is not scanned.
  if (candCount === 0 && missing !== null && Number.isFinite(limit)) return unplaceableByIndex(run, missing);
  if (candCount === 0) return unplaceable(run);
  // Phase B: the highest score, ties broken by node id (nodes are sorted by id, so by position).
  const { view, sctx, full, prep } = run;
  const nodes = view.nodes;
  const { candidates: cand, result } = scratch;
  let best = -1;
  let bestScore = Number.NEGATIVE_INFINITY;
  let scored: ScoredCandidate[] = [];
  for (let k = 0; k < candCount; k++) {
    const i = cand[k]!;
    const v = result[i]! & VARIANT_MASK;
    const node = nodes[i]!;
    let s: number;
    if (full) {
      const c = candidate(sctx, node, v);
      scored.push(c);
      s = c.score;
    } else s = scoreOnly(sctx, node, v);
    if (s > bestScore || (s === bestScore && i < best)) {
      best = i;
      bestScore = s;
    }
  }
  const chosen = nodes[best]!;
  const v = result[best]! & VARIANT_MASK;
  if (full) {
    scored.sort((a, b) => b.score - a.score || (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0));
    rejected.sort((a, b) => (a.node_id < b.node_id ? -1 : 1));
  } else scored = [candidate(sctx, chosen, v)];
  const variant = prep.variants[v]!;
  return {
    ...common(run, evaluated, sampled, scored, rejected),
    outcome: 'placed',
    node_id: chosen.node_id,
    variant: variant.name,
    execution: variant.execution,
    score: bestScore,
    pinned: false,
    reservation: reservationFor(run, chosen, variant),
  };
}

/**
 * Unplaceable, known from the capability index alone (on a fleet above `sample_above_nodes`): for
 * every variant some required capability is held by no node (`missing` names one per variant), so no node is evaluated (`nodes_evaluated` 0, no
 * `rejected` entries) and every node counts under `requirements`.
 */
function unplaceableByIndex(run: Run, missing: readonly string[]): Decision {
  run.counts.fill(0);
  run.counts[CONSTRAINTS.indexOf('requirements')] = run.view.nodes.length;
  return {
    ...common(run, 0, false, [], []),
    outcome: 'unplaceable',
    reason: `no node offers ${missing.join('; nor ')} (requirements ${run.view.nodes.length})`,
  };
}

/** Unplaceable: every node's reasons, in node id order. */
function unplaceable(run: Run): Decision {
  const { counts, view, ctx } = run;
  const nodes = view.nodes;
  counts.fill(0);
  const all: NodeRejection[] = [];
  for (const node of nodes) {
    const failures: ConstraintFailure[] = [];
    evaluateNode(ctx, node, failures);
    countFailures(counts, failures);
    all.push({ node_id: node.node_id, failures });
  }
  const summary = Object.entries(countsObject(counts))
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return {
    ...common(run, nodes.length, false, [], all),
    outcome: 'unplaceable',
    reason:
      nodes.length === 0
        ? 'the view holds no nodes'
        : `no node passes every constraint (${summary || 'no nodes'})`,
  };
}

/**
 * {@link place}, then (when it placed) {@link PlacementState.reserve} of the decision, so that the next
 * decision sees the resources taken. Returns the decision and the reservation id.
 */
export function placeAndReserve(
  request: PlacementRequest,
  view: PlacementView,
  state: PlacementState,
  options: PlaceOptions,
): { readonly decision: Decision; readonly reservation_id?: string } {
  const decision = place(request, view, state, options);
  if (decision.outcome !== 'placed') return { decision };
  return { decision, reservation_id: state.reserve(decision.reservation, view).id };
}
