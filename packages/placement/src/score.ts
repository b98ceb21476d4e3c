import type { PreparedRequest } from './prepare.js';
import type { PlacementRequest, Selector } from './request.js';
import type { PlacementState } from './state.js';
import type { ViewNode } from './view.js';
import type { ScoringWeights } from './weights.js';

function matches(sel: Selector, node: ViewNode): boolean {
  if ('node_id' in sel) return sel.node_id === node.node_id;
  return node.labels[sel.label] === sel.value;
}

/** Everything phase B reads for one decision. */
export interface ScoreContext {
  readonly request: PlacementRequest;
  readonly prep: PreparedRequest;
  readonly state: PlacementState;
  readonly weights: ScoringWeights;
}

/** Scratch the scorer writes its parts into (reused across candidates). */
export interface MutableParts {
  execution: number;
  affinity: number;
  accelerator_fit: number;
  measured_performance: number;
  load: number;
  stickiness: number;
  spread: number;
}

/** A fresh zeroed parts record. */
export function newParts(): MutableParts {
  return {
    execution: 0,
    affinity: 0,
    accelerator_fit: 0,
    measured_performance: 0,
    load: 0,
    stickiness: 0,
    spread: 0,
  };
}

/**
 * Phase B: scores `node` running ordered variant `v`, writing each part into `parts`, and returns the
 * sum. Every part depends only on the node, the request, the state and the weights, never on the
 * other candidates, so the score of a node is the same whichever nodes were sampled with it.
 */
export function scoreNode(ctx: ScoreContext, node: ViewNode, v: number, parts: MutableParts): number {
  const { prep, weights: w, state } = ctx;
  const rank = prep.ranks[v];
  parts.execution = rank === 0 ? w.native : rank === 1 ? w.dev_fallback : w.emulated;

  let aff = 0;
  for (let i = 0; i < prep.prefer.length; i++) if (matches(prep.prefer[i]!, node)) aff += w.affinity;
  for (let i = 0; i < prep.avoid.length; i++) if (matches(prep.avoid[i]!, node)) aff -= w.affinity;
  parts.affinity = aff;

  parts.accelerator_fit = prep.needsAccel[v] === node.has_accel ? w.accelerator_fit : 0;

  const perf = node.capById.get(prep.metric);
  const s = perf?.provenance === 'measured' ? perf.attrs.score : undefined;
  parts.measured_performance =
    typeof s === 'number' ? (w.measured_performance * Math.max(0, Math.min(1000, s))) / 1000 : 0;

  const usage = state.usage(node.node_id);
  const cpuLoad = ((usage?.cpu_pct ?? 0) + prep.cpu_pct) / node.cpu_capacity;
  const sysNeed = prep.memory_mb + (node.unified ? prep.accel_memory_mb : 0);
  const memLoad = node.memory_mb > 0 ? ((usage?.memory_mb ?? 0) + sysNeed) / node.memory_mb : 0;
  const load = Math.min(1, Math.max(node.load_permille / 1000, cpuLoad, memLoad));
  parts.load = w.load * (1 - load);

  parts.stickiness = prep.previous.has(node.node_id) ? w.stickiness : 0;

  const spread = ctx.request.spread;
  if (spread === undefined) parts.spread = 0;
  else {
    const value = node.labels[spread.label];
    parts.spread =
      value === undefined ? 0 : w.spread / (1 + state.spreadCount(ctx.request.workload, spread.label, value));
  }
  return (
    parts.execution +
    parts.affinity +
    parts.accelerator_fit +
    parts.measured_performance +
    parts.load +
    parts.stickiness +
    parts.spread
  );
}
