import type { ConstraintFailure, NodeRejection } from './decision.js';
import { ADDED, countFailures, type Run, VARIANT_MASK } from './engine-run.js';
import { evaluateNode, evaluateNodeMemo } from './evaluate.js';
import { type RequestVariant, variantLabel } from './request.js';
import type { EngineScratch, PlacementView } from './view.js';

/** What phase A found: candidates in `scratch.candidates[0..candCount)`, all of one execution tier. */
export interface ScanResult {
  readonly candCount: number;
  readonly evaluated: number;
  readonly sampled: boolean;
  readonly rejected: NodeRejection[];
  /**
   * When no node was looked at because, for every variant the scan considered, the capability index
   * holds no node with one of its required capabilities: that capability of each variant (`id
   * (variant name)`); null otherwise.
   */
  readonly missing: string[] | null;
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

/** A required capability of `variant` that no node of `view` has (`id (variant name)`), or undefined. */
function absentRequirement(view: PlacementView, variant: RequestVariant): string | undefined {
  for (const r of variant.requirements) {
    const id = r.id ?? r.id_prefix ?? '';
    if (view.withCapability(id).length === 0) return `${id} (variant ${variantLabel(variant)})`;
  }
  return undefined;
}

/**
 * Phase A over the capability index, best execution tier first, stopping once `limit` feasible nodes
 * of that tier are found (`Infinity`: exhaustive). When it stopped early (sampled), the request's
 * sticky (`previous_nodes`) and preferred (`prefer`) nodes are added to the candidates when they are
 * feasible in that tier, so sampling never hides them.
 */
export function scanPhaseA(run: Run, scratch: EngineScratch, limit: number): ScanResult {
  const { prep, view, state, ctx, full, counts } = run;
  const nodes = view.nodes;
  let epoch = (scratch.epoch + 1) >>> 0;
  if (epoch === 0) {
    scratch.stamp.fill(0);
    epoch = 1;
  }
  scratch.epoch = epoch;
  const { stamp, result, candidates: cand } = scratch;
  const memo = view.memoFor(prep);
  const rejected: NodeRejection[] = [];
  let evaluated = 0;
  let candCount = 0;
  let sampled = false;

  /** Phase A result of node `i`, evaluated once per decision; a rejection is recorded when `record`. */
  const visit = (i: number, record: boolean): number => {
    if (stamp[i] === epoch) return result[i]!;
    const node = nodes[i]!;
    const r = memo === null ? evaluateNode(ctx, node, null) : evaluateNodeMemo(ctx, node, memo);
    stamp[i] = epoch;
    result[i] = r;
    evaluated++;
    if (r < 0 && record) {
      if (full) {
        const failures: ConstraintFailure[] = [];
        evaluateNode(ctx, node, failures);
        countFailures(counts, failures);
        rejected.push({ node_id: node.node_id, failures });
      } else counts[-r - 1]!++;
    }
    return r;
  };
  /**
   * Adds node `i` to the candidates when it is feasible in `tier` and not yet added. Sticky and
   * preferred nodes offered after a sampled scan (`record` false) are not listed among the rejections
   * when they fail: like the nodes outside the sample, they are not candidates.
   */
  const offer = (i: number, tier: number, record = true): boolean => {
    const r = visit(i, record);
    if (r < 0 || (r & ADDED) !== 0 || prep.ranks[r & VARIANT_MASK] !== tier) return false;
    result[i] = r | ADDED;
    cand[candCount++] = i;
    return true;
  };

  const start0 = (prep.hash + Math.imul(state.generation, 0x9e3779b1)) >>> 0;
  const variants = prep.variants;
  let found = -1;
  // Variants whose index list was empty, each with a capability no node has; null once a node was seen.
  let missing: string[] | null = nodes.length === 0 ? null : [];
  scan: for (let tier = 0; tier <= 2; tier++) {
    if (tier === 2 && !ctx.allowEmulation) break;
    for (let v = 0; v < variants.length; v++) {
      if (prep.ranks[v] !== tier) continue;
      const list = candidateList(view, variants[v]!);
      const n = list === null ? nodes.length : list.length;
      if (n === 0) {
        const absent = missing === null ? undefined : absentRequirement(view, variants[v]!);
        if (absent === undefined) missing = null;
        else missing?.push(absent);
        continue;
      }
      missing = null;
      let idx = start0 % n;
      for (let j = 0; j < n; j++, idx = idx + 1 === n ? 0 : idx + 1) {
        if (offer(list === null ? idx : list[idx]!, tier) && candCount >= limit) {
          sampled = j < n - 1 || v < variants.length - 1;
          found = tier;
          break scan;
        }
      }
    }
    if (candCount > 0) {
      found = tier;
      break;
    }
  }
  if (sampled) {
    for (const id of prep.previous) {
      const i = view.byId.get(id);
      if (i !== undefined) offer(i, found, false);
    }
    for (const sel of prep.prefer) {
      if ('node_id' in sel) {
        const i = view.byId.get(sel.node_id);
        if (i !== undefined) offer(i, found, false);
      } else {
        const list = view.withLabel(sel.label, sel.value);
        for (let k = 0; k < list.length; k++) offer(list[k]!, found, false);
      }
    }
  }
  return { candCount, evaluated, sampled, rejected, missing: missing?.length === 0 ? null : missing };
}
