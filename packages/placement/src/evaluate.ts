import { NODE_TIERS } from '@heddle/model';
import type { ConstraintFailure, GovernanceInput, GovernanceVerdict } from './decision.js';

/** Fast-path failure codes: `-(1 + index in CONSTRAINTS)`. */
const F_REVOKED = -2;
const F_LIVENESS = -3;
const F_EXPIRED = -4;
const F_TIER = -5;
const F_CORDONED = -6;
const F_LABELS = -7;
const F_WORKLOAD = -8;
const F_CORES = -9;
const F_MEMORY = -10;
const F_CPU = -11;
const F_REQS = -12;
const F_EMULATION = -13;
const F_GOVERNANCE = -14;

import type { PreparedRequest } from './prepare.js';
import type { RequestVariant } from './request.js';
import { checkRequirement } from './requirement.js';
import { labelRequirementLines, requirementLine } from './requirement-lines.js';
import type { NodeUsage, PlacementState } from './state.js';
import type { ViewNode } from './view.js';

/** Everything phase A reads for one decision. */
export interface EvalContext {
  readonly prep: PreparedRequest;
  readonly state: PlacementState;
  readonly now: number;
  readonly workload: string;
  readonly workloadRevoked: boolean;
  readonly allowEmulation: boolean;
  readonly governance: GovernanceInput | undefined;
}

function verdictFor(g: GovernanceInput, node: ViewNode, variant: RequestVariant): GovernanceVerdict {
  if (typeof g === 'function') return g(node.node_id, variant, node);
  if (g instanceof Map) return g.get(node.node_id) ?? MISSING;
  // cast: the function and Map forms returned above: what is left is the record form
  const rec = g as Readonly<Record<string, GovernanceVerdict>>;
  return Object.hasOwn(rec, node.node_id) ? rec[node.node_id]! : MISSING;
}

const MISSING: GovernanceVerdict = { verdict: 'deny', reason: 'no governance verdict for this node' };

/**
 * Phase A for one node. Returns the index (into `prep.variants`) of the variant the node would run, or
 * a negative number when it fails a constraint: `-(1 + index in CONSTRAINTS)` of the first failure
 * (on the recording path, of the last check that failed: use `out` there). With `out`, every failed constraint is appended to it (and checking
 * continues past the first failure); without, it stops at the first (the fast path allocates nothing).
 */
export function evaluateNode(ctx: EvalContext, node: ViewNode, out: ConstraintFailure[] | null): number {
  const { prep, state } = ctx;
  let failed = false;
  if (state.isNodeRevoked(node.node_id)) {
    if (out === null) return F_REVOKED;
    failed = true;
    out.push({ constraint: 'revoked_node', detail: 'node is revoked' });
  }
  if (node.liveness !== 'alive') {
    if (out === null) return F_LIVENESS;
    failed = true;
    out.push({ constraint: 'liveness', detail: `node is ${node.liveness}` });
  }
  if (ctx.now >= node.expires_at_ms) {
    if (out === null) return F_EXPIRED;
    failed = true;
    out.push({ constraint: 'facts_expired', detail: `facts expired at ${node.expires_at_ms}` });
  }
  if (node.tierRank < prep.minTierRank) {
    if (out === null) return F_TIER;
    failed = true;
    out.push({
      constraint: 'tier',
      detail: `${node.tier} is below the required ${NODE_TIERS[prep.minTierRank]}`,
    });
  }
  if (node.cordoned) {
    if (out === null) return F_CORDONED;
    failed = true;
    out.push({ constraint: 'cordoned', detail: 'node is cordoned by the operator (no new places)' });
  }
  const missing = missingLabel(prep, node);
  if (missing !== null) {
    if (out === null) return F_LABELS;
    failed = true;
    out.push({ constraint: 'labels', detail: missing });
  }
  if (ctx.workloadRevoked) {
    if (out === null) return F_WORKLOAD;
    failed = true;
    out.push({ constraint: 'workload_revoked', detail: 'the workload package is revoked' });
  }
  const usage: NodeUsage | undefined = state.usage(node.node_id);
  if (usage !== undefined && (ctx.prep.exclude.length !== 0 || usage.excluded.size !== 0)) {
    const coresident = coresidentConflict(ctx, usage);
    if (coresident !== null) {
      if (out === null) return F_CORES;
      failed = true;
      out.push({ constraint: 'co_residency', detail: coresident });
    }
  }
  if (!memoryFits(prep, node, usage)) {
    if (out === null) return F_MEMORY;
    failed = true;
    out.push({ constraint: 'memory', detail: memoryDetail(prep, node, usage) });
  }
  const cpuUsed = usage?.cpu_pct ?? 0;
  if (cpuUsed + prep.cpu_pct > node.cpu_capacity) {
    if (out === null) return F_CPU;
    failed = true;
    out.push({
      constraint: 'cpu',
      detail: `needs ${prep.cpu_pct}% cpu, ${node.cpu_capacity - cpuUsed}% free of ${node.cpu_capacity}%`,
    });
  }
  const claims = usage?.claims;
  const variants = prep.variants;
  let chosen = -1;
  let emulatedFit = -1;
  const mark = out === null ? 0 : out.length;
  for (let v = 0; v < variants.length; v++) {
    const variant = variants[v]!;
    const reqs = variant.requirements;
    let ok = true;
    for (let r = 0; r < reqs.length; r++) {
      const reason = checkRequirement(reqs[r]!, node, claims);
      if (reason !== null) {
        ok = false;
        if (out !== null && (prep.ranks[v] !== 2 || ctx.allowEmulation)) {
          out.push(requirementLine(reqs[r]!, reason, variant));
        }
        break;
      }
    }
    if (!ok) continue;
    if (prep.ranks[v] === 2 && !ctx.allowEmulation) {
      if (emulatedFit < 0) emulatedFit = v;
      continue;
    }
    chosen = v;
    break;
  }
  if (chosen < 0) {
    if (out === null) return emulatedFit >= 0 ? F_EMULATION : F_REQS;
    labelRequirementLines(out, mark);
    if (emulatedFit >= 0) {
      out.push({
        constraint: 'emulation',
        detail: `only the emulated variant ${variants[emulatedFit]!.name} fits and emulation is not allowed`,
        variant: variants[emulatedFit]!.name,
      });
    } else if (!out.some((f) => f.constraint === 'requirements')) {
      out.push({ constraint: 'requirements', detail: 'no variant may run here (emulation not allowed)' });
    }
    return -1;
  }
  if (out !== null) out.length = mark; // variants tried before the one that fits are not failures
  if (failed) return -1;
  if (ctx.governance !== undefined) {
    const v = verdictFor(ctx.governance, node, variants[chosen]!);
    if (v.verdict !== 'permit') {
      if (out !== null) {
        const rule = v.verdict === 'deny' && v.rule !== undefined ? ` (rule ${v.rule})` : '';
        out.push({ constraint: 'governance', detail: `${v.verdict}: ${v.reason}${rule}` });
      }
      return F_GOVERNANCE;
    }
  }
  return chosen;
}

/** The first label constraint `node` fails, in words, or null when it carries every one. */
function missingLabel(prep: PreparedRequest, node: ViewNode): string | null {
  const want = prep.labels;
  for (let i = 0; i < want.length; i++) {
    const c = want[i]!;
    const has = Object.hasOwn(node.labels, c.label) ? node.labels[c.label] : undefined;
    if (has !== c.value) {
      return has === undefined
        ? `node has no label ${c.label} (wanted ${c.label}=${c.value})`
        : `node has ${c.label}=${has}, wanted ${c.value}`;
    }
  }
  return null;
}

function coresidentConflict(ctx: EvalContext, usage: NodeUsage): string | null {
  const ex = ctx.prep.exclude;
  for (let i = 0; i < ex.length; i++) {
    if (usage.workloads.has(ex[i]!)) return `${ex[i]} runs here and is excluded`;
  }
  if (usage.excluded.size !== 0 && usage.excluded.has(ctx.workload))
    return `a resident workload excludes ${ctx.workload}`;
  return null;
}

function memoryFits(prep: PreparedRequest, node: ViewNode, usage: NodeUsage | undefined): boolean {
  const sysNeed = prep.memory_mb + (node.unified ? prep.accel_memory_mb : 0);
  if (sysNeed > 0 && (usage?.memory_mb ?? 0) + sysNeed > Math.max(0, node.memory_mb)) return false;
  if (!node.unified && prep.accel_memory_mb > 0) {
    return (usage?.accel_memory_mb ?? 0) + prep.accel_memory_mb <= node.accel_memory_mb;
  }
  return true;
}

function memoryDetail(prep: PreparedRequest, node: ViewNode, usage: NodeUsage | undefined): string {
  if (node.memory_mb < 0) return 'node reports no mem.system';
  const sysNeed = prep.memory_mb + (node.unified ? prep.accel_memory_mb : 0);
  const free = node.memory_mb - (usage?.memory_mb ?? 0);
  if (sysNeed > free) {
    const pool = node.unified ? ' (unified pool)' : '';
    return `needs ${sysNeed} MB, ${free} MB free of ${node.memory_mb} MB${pool}`;
  }
  const afree = node.accel_memory_mb - (usage?.accel_memory_mb ?? 0);
  return `needs ${prep.accel_memory_mb} MB accelerator memory, ${afree} MB free of ${node.accel_memory_mb} MB`;
}

/**
 * The parts of phase A that depend only on the view and the request (liveness, trust tier, the
 * requirements of the best variant ignoring claims, emulation): the variant index, or a failure code.
 */
function staticPart(ctx: EvalContext, node: ViewNode): number {
  const prep = ctx.prep;
  if (node.liveness !== 'alive') return F_LIVENESS;
  if (node.tierRank < prep.minTierRank) return F_TIER;
  if (node.cordoned) return F_CORDONED;
  if (prep.labels.length !== 0 && missingLabel(prep, node) !== null) return F_LABELS;
  const variants = prep.variants;
  let emulatedFit = false;
  for (let v = 0; v < variants.length; v++) {
    const reqs = variants[v]!.requirements;
    let ok = true;
    for (let r = 0; r < reqs.length && ok; r++) ok = checkRequirement(reqs[r]!, node, undefined) === null;
    if (!ok) continue;
    if (prep.ranks[v] === 2 && !ctx.allowEmulation) {
      emulatedFit = true;
      continue;
    }
    return v;
  }
  return emulatedFit ? F_EMULATION : F_REQS;
}

/**
 * Phase A on the fast path with a per-(view, request) memo of the static part: `memo[i]` is 0 when not
 * yet computed, else the static result plus one (variant) or the failure code (negative). The dynamic
 * part (revocations, expiry, co-residency, memory, CPU, governance) is checked every time; a node with
 * claims held on it is evaluated in full, since claims can change which variant fits.
 */
export function evaluateNodeMemo(ctx: EvalContext, node: ViewNode, memo: Int32Array): number {
  let s = memo[node.index]!;
  if (s === 0) {
    const r = staticPart(ctx, node);
    s = r >= 0 ? r + 1 : r;
    memo[node.index] = s;
  }
  if (s < 0) return s;
  const state = ctx.state;
  if (state.isNodeRevoked(node.node_id)) return F_REVOKED;
  if (ctx.now >= node.expires_at_ms) return F_EXPIRED;
  if (ctx.workloadRevoked) return F_WORKLOAD;
  const usage = state.usage(node.node_id);
  if (usage !== undefined) {
    if (usage.claims.size !== 0) return evaluateNode(ctx, node, null);
    if (
      (ctx.prep.exclude.length !== 0 || usage.excluded.size !== 0) &&
      coresidentConflict(ctx, usage) !== null
    ) {
      return F_CORES;
    }
  }
  const prep = ctx.prep;
  if (!memoryFits(prep, node, usage)) return F_MEMORY;
  if ((usage?.cpu_pct ?? 0) + prep.cpu_pct > node.cpu_capacity) return F_CPU;
  const chosen = s - 1;
  if (
    ctx.governance !== undefined &&
    verdictFor(ctx.governance, node, prep.variants[chosen]!).verdict !== 'permit'
  ) {
    return F_GOVERNANCE;
  }
  return chosen;
}
