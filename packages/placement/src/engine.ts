import {
  CONSTRAINTS,
  type ConstraintFailure,
  type ConstraintName,
  type Decision,
  type DecisionCommon,
  type GovernanceInput,
  type NodeRejection,
  type ScoredCandidate,
} from './decision.js';
import { PlacementError } from './errors.js';
import { type EvalContext, evaluateNode, evaluateNodeMemo } from './evaluate.js';
import { type PreparedRequest, prepareRequest } from './prepare.js';
import type { PlacementRequest, RequestVariant } from './request.js';
import { checkRequirement } from './requirement.js';
import { type MutableParts, newParts, type ScoreContext, scoreNode } from './score.js';
import type { PlacementState, ReservationInput } from './state.js';
import type { PlacementView, ViewNode } from './view.js';
import { DEFAULT_WEIGHTS, type ScoringWeights } from './weights.js';

/** Default bound on the feasible nodes scored per decision (see the sampling rule in docs/placement.md). */
export const DEFAULT_MAX_CANDIDATES = 32;

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
   * Stop after this many feasible nodes of the best execution tier and score only those (default 32;
   * `Infinity` scores every feasible node).
   */
  readonly max_candidates?: number;
  /**
   * `full` (default): every scored candidate and every evaluated node's failures are in the decision.
   * `summary`: only the chosen candidate and counts per constraint (an unplaceable decision still
   * lists every node's reasons).
   */
  readonly detail?: 'full' | 'summary';
}

const ADDED = 1 << 20;
const VARIANT_MASK = 0xffff;
const weightCache = new WeakMap<Partial<ScoringWeights>, ScoringWeights>();
const scratchParts: MutableParts = newParts();

function weightsOf(w: Partial<ScoringWeights> | undefined): ScoringWeights {
  if (w === undefined) return DEFAULT_WEIGHTS;
  let full = weightCache.get(w);
  if (full === undefined) {
    full = Object.freeze({ ...DEFAULT_WEIGHTS, ...w });
    weightCache.set(w, full);
  }
  return full;
}

/** The most selective index list for a variant: nodes having its rarest required id or prefix. */
function candidateList(view: PlacementView, variant: RequestVariant): Int32Array | null {
  let best: Int32Array | null = null;
  const reqs = variant.requirements;
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i]!;
    const list = view.withCapability(r.id ?? r.id_prefix ?? '');
    if (best === null || list.length < best.length) best = list;
  }
  return best;
}

function reservationFor(
  request: PlacementRequest,
  prep: PreparedRequest,
  node: ViewNode,
  variant: RequestVariant,
  state: PlacementState,
): ReservationInput {
  const claims: string[] = [];
  const held = state.usage(node.node_id)?.claims;
  const matched: string[] = [];
  for (const req of variant.requirements) {
    matched.length = 0;
    checkRequirement(req, node, held, matched);
    for (const id of matched)
      if (req.exclusive === true || node.capById.get(id)?.exclusive === true) claims.push(id);
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

function candidate(ctx: ScoreContext, node: ViewNode, v: number): ScoredCandidate {
  const score = scoreNode(ctx, node, v, scratchParts);
  return {
    node_id: node.node_id,
    variant: ctx.prep.variants[v]!.name,
    execution: ctx.prep.variants[v]!.execution,
    score,
    parts: { ...scratchParts },
  };
}

function countsObject(counts: Int32Array): Partial<Record<ConstraintName, number>> {
  const out: Partial<Record<ConstraintName, number>> = {};
  for (let i = 0; i < counts.length; i++) if (counts[i]! > 0) out[CONSTRAINTS[i]!] = counts[i]!;
  return out;
}

/**
 * The placement engine: a pure function of the request, the view, the state and the options (time is
 * an option; no I/O, no clock, no randomness, and the same decision whatever order the nodes were
 * given in). Phase A checks each node's hard constraints (revoked node, liveness, expired facts, trust
 * tier, revoked workload, co-residency, memory, CPU, the requirements of the best variant it can run,
 * emulation, governance); phase B scores the survivors of the best execution tier; the winner is the
 * highest score, ties broken by node id. A pin bypasses scoring but never the constraints. With many
 * feasible nodes it scores at most `max_candidates` of them, found by scanning the capability index from
 * a start derived from the workload and the state's generation (see docs/placement.md).
 */
export function place(
  request: PlacementRequest,
  view: PlacementView,
  state: PlacementState,
  options: PlaceOptions,
): Decision {
  const now = options.now_ms;
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
    throw new PlacementError(
      'invalid_request',
      'invalid request: variants: at least one variant is required',
      {
        field: 'variants',
      },
    );
  }
  const maxCandidates = options.max_candidates ?? DEFAULT_MAX_CANDIDATES;
  if (!(maxCandidates >= 1)) {
    throw new PlacementError('invalid_request', 'invalid request: max_candidates must be at least 1', {
      field: 'max_candidates',
    });
  }
  const full = options.detail !== 'summary';
  const weights = weightsOf(options.weights);
  const prep = prepareRequest(request);
  const allowEmulation = request.allow_emulation === true;
  const ctx: EvalContext = {
    prep,
    state,
    now,
    workload: request.workload,
    workloadRevoked: request.package_id !== undefined && state.isPackageRevoked(request.package_id),
    allowEmulation,
    governance: options.governance,
  };
  const sctx: ScoreContext = { request, prep, state, weights };
  const nodes = view.nodes;
  const counts = new Int32Array(CONSTRAINTS.length);
  const common = (
    evaluated: number,
    sampled: boolean,
    candidates: readonly ScoredCandidate[],
    rejected: readonly NodeRejection[],
  ): DecisionCommon => ({
    workload: request.workload,
    now_ms: now,
    nodes_total: nodes.length,
    nodes_evaluated: evaluated,
    sampled,
    candidates,
    rejected,
    rejected_by_constraint: countsObject(counts),
    governance_checked: options.governance !== undefined,
    weights,
  });

  // A pin: that node or an error naming what it fails.
  if (request.pin !== undefined) {
    const node = view.get(request.pin);
    if (node === undefined) {
      counts[0]!++;
      const failures: ConstraintFailure[] = [
        { constraint: 'unknown_node', detail: `no node ${request.pin} in the view` },
      ];
      return {
        ...common(0, false, [], [{ node_id: request.pin, failures }]),
        outcome: 'pin_refused',
        node_id: request.pin,
        failures,
        error: {
          code: 'unknown_node',
          message: `pin to ${request.pin} refused: unknown_node (no such node in the view)`,
        },
      };
    }
    const failures: ConstraintFailure[] = [];
    const v = evaluateNode(ctx, node, failures);
    if (v < 0) {
      for (const f of failures) counts[CONSTRAINTS.indexOf(f.constraint)]!++;
      const named = failures.map((f) => `${f.constraint} (${f.detail})`).join('; ');
      return {
        ...common(1, false, [], [{ node_id: node.node_id, failures }]),
        outcome: 'pin_refused',
        node_id: node.node_id,
        failures,
        error: { code: 'pin_ineligible', message: `pin to ${node.node_id} refused: ${named}` },
      };
    }
    const c = candidate(sctx, node, v);
    return {
      ...common(1, false, [c], []),
      outcome: 'placed',
      node_id: node.node_id,
      variant: c.variant,
      execution: c.execution,
      score: c.score,
      pinned: true,
      reservation: reservationFor(request, prep, node, prep.variants[v]!, state),
    };
  }

  // Phase A over the capability index, best execution tier first, up to maxCandidates feasible nodes.
  let epoch = (view.epoch + 1) >>> 0;
  if (epoch === 0) {
    view.stamp.fill(0);
    epoch = 1;
  }
  view.epoch = epoch;
  const stamp = view.stamp;
  const result = view.result;
  const cand = view.candidates;
  let candCount = 0;
  let evaluated = 0;
  let sampled = false;
  const rejected: NodeRejection[] = [];
  const start0 = (prep.hash + Math.imul(state.generation, 0x9e3779b1)) >>> 0;
  const variants = prep.variants;
  const memo = view.memoFor(request);

  scan: for (let tier = 0; tier <= 2; tier++) {
    if (tier === 2 && !allowEmulation) break;
    for (let v = 0; v < variants.length; v++) {
      if (prep.ranks[v] !== tier) continue;
      const list = candidateList(view, variants[v]!);
      const n = list === null ? nodes.length : list.length;
      if (n === 0) continue;
      let idx = start0 % n;
      for (let j = 0; j < n; j++, idx = idx + 1 === n ? 0 : idx + 1) {
        const i = list === null ? idx : list[idx]!;
        let r: number;
        if (stamp[i] !== epoch) {
          const node = nodes[i]!;
          r = memo === null ? evaluateNode(ctx, node, null) : evaluateNodeMemo(ctx, node, memo);
          stamp[i] = epoch;
          result[i] = r;
          evaluated++;
          if (r < 0) {
            if (full) {
              const failures: ConstraintFailure[] = [];
              evaluateNode(ctx, node, failures);
              for (const f of failures) counts[CONSTRAINTS.indexOf(f.constraint)]!++;
              rejected.push({ node_id: node.node_id, failures });
            } else counts[-r - 1]!++;
          }
        } else r = result[i]!;
        if (r >= 0 && (r & ADDED) === 0 && prep.ranks[r & VARIANT_MASK] === tier) {
          result[i] = r | ADDED;
          cand[candCount++] = i;
          if (candCount >= maxCandidates) {
            sampled = j < n - 1 || v < variants.length - 1;
            break scan;
          }
        }
      }
    }
    if (candCount > 0) break;
  }

  if (candCount === 0) {
    // Unplaceable: every node's reasons, in node id order.
    counts.fill(0);
    const all: NodeRejection[] = [];
    for (const node of nodes) {
      const failures: ConstraintFailure[] = [];
      evaluateNode(ctx, node, failures);
      for (const f of failures) counts[CONSTRAINTS.indexOf(f.constraint)]!++;
      all.push({ node_id: node.node_id, failures });
    }
    const top = countsObject(counts);
    const summary = Object.entries(top)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    return {
      ...common(nodes.length, false, [], all),
      outcome: 'unplaceable',
      reason:
        nodes.length === 0
          ? 'the view holds no nodes'
          : `no node passes every constraint (${summary || 'no nodes'})`,
    };
  }

  // Phase B.
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
    } else s = scoreNode(sctx, node, v, scratchParts);
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
  return {
    ...common(evaluated, sampled, scored, rejected),
    outcome: 'placed',
    node_id: chosen.node_id,
    variant: variants[v]!.name,
    execution: variants[v]!.execution,
    score: bestScore,
    pinned: false,
    reservation: reservationFor(request, prep, chosen, variants[v]!, state),
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
