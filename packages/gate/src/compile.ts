import { blake3Hex, canonicalBytes, type JsonValue } from '@heddle/envelope';
import { networkRank, tierRank } from '@heddle/model';
import type { GateContext } from './context.js';
import { ACTIONS, type Action, ALL_ACTIONS, costToBasisPoints, trustRank } from './levels.js';
import type { Policy, PolicyRule, RuleEffect } from './policy.js';

/** A rule with its conditions turned into integer bounds and sets, ready for fast matching. */
export interface CompiledRule {
  /** The rule as written. */
  readonly rule: PolicyRule;
  /** Position in the policy file. */
  readonly index: number;
  /** The rule's effect. */
  readonly effect: RuleEffect;
  /** Agents matched, `null` for any. */
  readonly agents: ReadonlySet<string> | null;
  /** Kinds matched, `null` for any. */
  readonly kinds: ReadonlySet<string> | null;
  /** Package trust bounds as ranks (inclusive). */
  readonly minTrust: number;
  /** See `minTrust`. */
  readonly maxTrust: number;
  /** Node tier bounds as ranks (inclusive). */
  readonly minTier: number;
  /** See `minTier`. */
  readonly maxTier: number;
  /** Network bounds as ranks (inclusive). */
  readonly minNet: number;
  /** See `minNet`. */
  readonly maxNet: number;
  /** `true`/`false`: must equal; `null`: any. (For a permit, "allowed" compiles to `null`.) */
  readonly secrets: boolean | null;
  /** Like `secrets`, for emulation. */
  readonly emulated: boolean | null;
  /** Accelerators: `null` any (including none); a set, see {@link mismatch}. */
  readonly accelerators: ReadonlySet<string> | null;
  /** Resource cost bounds in basis points (inclusive). */
  readonly minCostBp: number;
  /** See `minCostBp`. */
  readonly maxCostBp: number;
}

/** A context reduced to what rules compare: ranks and basis points. */
export interface PreparedContext {
  /** The agent asking. */
  readonly agent: string;
  /** The validated context. */
  readonly ctx: GateContext;
  /** Rank of `package_trust`. */
  readonly trust: number;
  /** Rank of `node_tier`. */
  readonly tier: number;
  /** Rank of `network`. */
  readonly net: number;
  /** `resource_cost` in basis points. */
  readonly costBp: number;
}

/** A validated policy, indexed by action, with its hash. */
export interface CompiledPolicy {
  /** The policy as validated. */
  readonly policy: Policy;
  /** BLAKE3 of the canonical JSON of {@link policyForChain}: names the exact policy in each decision. */
  readonly hash: string;
  /** Every rule, in file order. */
  readonly rules: readonly CompiledRule[];
  /** Per action (in `ACTIONS` order): the rules covering it, deny first, then defer, then permit, each in file order. */
  readonly byAction: readonly (readonly CompiledRule[])[];
}

const EFFECT_ORDER: Record<RuleEffect, number> = { deny: 0, defer: 1, permit: 2 };

/** Compiles a validated policy (see `parsePolicy`). */
export function compilePolicy(policy: Policy): CompiledPolicy {
  const compiled = policy.rules.map(compileRule);
  const byAction = ACTIONS.map((a) =>
    compiled
      .filter((r) => r.rule.actions.includes(a) || r.rule.actions.includes(ALL_ACTIONS))
      .sort((x, y) => EFFECT_ORDER[x.effect] - EFFECT_ORDER[y.effect] || x.index - y.index),
  );
  const hash = blake3Hex(canonicalBytes(policyForChain(policy), { maxDepth: 32, maxBytes: 8 * 1024 * 1024 }));
  return { policy, hash, rules: compiled, byAction };
}

/** The rules covering `action` in precedence order (empty for an unknown action). */
export function rulesFor(compiled: CompiledPolicy, action: Action): readonly CompiledRule[] {
  return compiled.byAction[ACTIONS.indexOf(action)] ?? [];
}

function compileRule(rule: PolicyRule, index: number): CompiledRule {
  const permit = rule.effect === 'permit';
  const set = (a: readonly string[] | undefined): ReadonlySet<string> | null => (a ? new Set(a) : null);
  let accelerators: ReadonlySet<string> | null;
  if (rule.accelerators === '*') accelerators = null;
  else if (rule.accelerators === undefined) accelerators = permit ? new Set() : null;
  else accelerators = new Set(rule.accelerators);
  const allowance = (v: boolean | undefined): boolean | null =>
    permit ? (v === true ? null : false) : (v ?? null);
  return {
    rule,
    index,
    effect: rule.effect,
    agents: set(rule.agents),
    kinds: set(rule.kinds),
    minTrust: rule.min_package_trust ? trustRank(rule.min_package_trust) : 0,
    maxTrust: rule.max_package_trust ? trustRank(rule.max_package_trust) : 99,
    minTier: rule.min_node_tier ? tierRank(rule.min_node_tier) : 0,
    maxTier: rule.max_node_tier ? tierRank(rule.max_node_tier) : 99,
    minNet: rule.min_network ? networkRank(rule.min_network) : 0,
    maxNet: rule.max_network ? networkRank(rule.max_network) : 99,
    secrets: allowance(rule.secrets),
    emulated: allowance(rule.emulated),
    accelerators,
    minCostBp: rule.min_resource_cost === undefined ? 0 : costToBasisPoints(rule.min_resource_cost),
    maxCostBp: rule.max_resource_cost === undefined ? 99_999 : costToBasisPoints(rule.max_resource_cost),
  };
}

/** Reduces a validated context for matching. */
export function prepareContext(agent: string, ctx: GateContext): PreparedContext {
  return {
    agent,
    ctx,
    trust: trustRank(ctx.package_trust),
    tier: tierRank(ctx.node_tier),
    net: networkRank(ctx.network),
    costBp: costToBasisPoints(ctx.resource_cost),
  };
}

/**
 * The first condition of `r` that `p` fails (a rule field name), or `null` when the rule matches.
 * Allocation-free. A permit's accelerator set is an allowance (no accelerator always passes); a
 * deny or defer's is a selector (the context must use one of them).
 */
export function mismatch(r: CompiledRule, p: PreparedContext): string | null {
  const c = p.ctx;
  if (r.agents !== null && !r.agents.has(p.agent)) return 'agents';
  if (r.kinds !== null && !r.kinds.has(c.kind)) return 'kinds';
  if (p.trust < r.minTrust) return 'min_package_trust';
  if (p.trust > r.maxTrust) return 'max_package_trust';
  if (p.tier < r.minTier) return 'min_node_tier';
  if (p.tier > r.maxTier) return 'max_node_tier';
  if (p.net < r.minNet) return 'min_network';
  if (p.net > r.maxNet) return 'max_network';
  if (r.secrets !== null && c.secrets !== r.secrets) return 'secrets';
  if (r.emulated !== null && c.emulated !== r.emulated) return 'emulated';
  if (r.accelerators !== null) {
    if (r.effect === 'permit') {
      if (c.accelerator !== undefined && !r.accelerators.has(c.accelerator)) return 'accelerators';
    } else if (c.accelerator === undefined || !r.accelerators.has(c.accelerator)) return 'accelerators';
  } else if (r.effect !== 'permit' && r.rule.accelerators === '*' && c.accelerator === undefined) {
    return 'accelerators';
  }
  if (p.costBp < r.minCostBp) return 'min_resource_cost';
  if (p.costBp > r.maxCostBp) return 'max_resource_cost';
  return null;
}

/** A sentence saying why `p` fails condition `field` of `r` (for reasons and `explain`). */
export function describeMismatch(r: CompiledRule, field: string, p: PreparedContext): string {
  const c = p.ctx;
  const rule = r.rule;
  const permit = r.effect === 'permit';
  switch (field) {
    case 'agents':
      return `agent ${p.agent} is not in agents`;
    case 'kinds':
      return `kind ${c.kind} is not in kinds`;
    case 'min_package_trust':
      return `needs package_trust >= ${rule.min_package_trust} (is ${c.package_trust})`;
    case 'max_package_trust':
      return `needs package_trust <= ${rule.max_package_trust} (is ${c.package_trust})`;
    case 'min_node_tier':
      return `needs node_tier >= ${rule.min_node_tier} (is ${c.node_tier})`;
    case 'max_node_tier':
      return `needs node_tier <= ${rule.max_node_tier} (is ${c.node_tier})`;
    case 'min_network':
      return `needs network >= ${rule.min_network} (is ${c.network})`;
    case 'max_network':
      return `needs network <= ${rule.max_network} (is ${c.network})`;
    case 'secrets':
      return permit ? 'secrets are not allowed' : `matches secrets=${rule.secrets} only (is ${c.secrets})`;
    case 'emulated':
      return permit
        ? 'emulation is not allowed'
        : `matches emulated=${rule.emulated} only (is ${c.emulated})`;
    case 'accelerators':
      return permit
        ? `accelerator ${c.accelerator} is not allowed`
        : `matches accelerators ${fmtList(rule.accelerators)} only (is ${c.accelerator ?? 'none'})`;
    case 'min_resource_cost':
      return `needs resource_cost >= ${rule.min_resource_cost} (is ${c.resource_cost})`;
    case 'max_resource_cost':
      return `needs resource_cost <= ${rule.max_resource_cost} (is ${c.resource_cost})`;
    default:
      return `fails ${field}`;
  }
}

function fmtList(v: readonly string[] | '*' | undefined): string {
  return v === undefined || v === '*' ? '*' : v.join(',');
}

/**
 * The policy as it is hashed: canonical JSON is integers only, so `min_resource_cost` and
 * `max_resource_cost` become `min_resource_cost_bp` and `max_resource_cost_bp` (basis points).
 */
export function policyForChain(policy: Policy): JsonValue {
  const rules = policy.rules.map((r) => {
    const out: { [k: string]: JsonValue } = {};
    // cast: a validated rule's fields are JSON values; each is narrowed below
    for (const [k, v] of Object.entries(r) as [string, unknown][]) {
      if (v === undefined) continue;
      if (k === 'min_resource_cost' || k === 'max_resource_cost')
        // cast: the resource cost fields of a validated rule are numbers
        out[`${k}_bp`] = costToBasisPoints(v as number);
      // cast: the other fields of a validated rule are JSON values
      else out[k] = v as JsonValue;
    }
    return out;
  });
  const out: { [k: string]: JsonValue } = { version: policy.version, name: policy.name, rules };
  if (policy.description !== undefined) out.description = policy.description;
  return out;
}
