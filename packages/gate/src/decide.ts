import type { RevocationCheck } from '@heddle/model';
import {
  type CompiledPolicy,
  describeMismatch,
  mismatch,
  type PreparedContext,
  prepareContext,
  rulesFor,
} from './compile.js';
import type { GateContext } from './context.js';
import { safeParseContext } from './context.js';
import { BUILTIN_RULES, type Decision } from './decision.js';
import { type Action, isAction, TEARDOWN_ACTIONS } from './levels.js';
import { checkRevocations } from './revocation.js';

/** The result of {@link evaluate}: the decision, and the validated action and context when they were valid. */
export interface Evaluation {
  /** The decision. */
  readonly decision: Decision;
  /** The action, when it is one of the eight. */
  readonly action?: Action;
  /** The validated context, when it was valid. */
  readonly context?: GateContext;
}

const MAX_AGENT = 256;

/**
 * Decides a validated action and context, in the order of docs/policy.md, "Evaluation order": a revoked reference denies (as
 * does a revocation check that fails closed, rule `builtin:revocations_unavailable`);
 * secrets need a `pinned` node; then the rules covering the action: a matching deny wins, then a
 * matching defer, then a matching permit (each the first of its effect in file order); otherwise deny.
 * Pure and deterministic.
 */
export function decide(
  compiled: CompiledPolicy,
  revocations: RevocationCheck,
  agent: string,
  action: Action,
  ctx: GateContext,
): Decision {
  const revoked = checkRevocations(revocations, ctx);
  if (revoked) return { verdict: 'deny', rule: revoked.rule, reason: revoked.reason };
  if (ctx.secrets && ctx.node_tier !== 'pinned') {
    return {
      verdict: 'deny',
      rule: BUILTIN_RULES.secretsNeedPinned,
      reason: `secrets need a pinned node (node_tier is ${ctx.node_tier})`,
    };
  }
  const p = prepareContext(agent, ctx);
  const rules = rulesFor(compiled, action);
  for (const r of rules) {
    if (mismatch(r, p) !== null) continue;
    const id = r.rule.id;
    if (r.effect === 'permit') return { verdict: 'permit', rule: id, reason: `permitted by rule ${id}` };
    if (r.effect === 'deny')
      return { verdict: 'deny', rule: id, reason: r.rule.reason ?? `denied by rule ${id}` };
    return { verdict: 'defer', rule: id, reason: r.rule.reason ?? `rule ${id} needs an operator's approval` };
  }
  return { verdict: 'deny', rule: BUILTIN_RULES.defaultDeny, reason: defaultDenyReason(action, rules, p) };
}

function defaultDenyReason(action: Action, rules: ReturnType<typeof rulesFor>, p: PreparedContext): string {
  const permits = rules.filter((r) => r.effect === 'permit');
  if (permits.length === 0) return `no permit rule covers ${action} (default deny)`;
  const near = permits.slice(0, 3).map((r) => {
    const field = mismatch(r, p) ?? '';
    return `${r.rule.id} ${describeMismatch(r, field, p)}`;
  });
  const more = permits.length > 3 ? `; and ${permits.length - 3} more` : '';
  return `no permit rule matches ${action} (default deny): ${near.join('; ')}${more}`;
}

/**
 * {@link decide} for taking down what is already placed. `workload.stop` and `workload.unload` that
 * are denied are re-decided as if the node were `pinned`; if that permits, the denial was caused by
 * the node tier alone and is waived: the result is that permit, carrying a {@link Waiver} naming the
 * denial. Revocations and deny rules that do not depend on the tier still deny; defers are not waived.
 * Other actions are decided as by {@link decide}.
 */
export function decideTeardown(
  compiled: CompiledPolicy,
  revocations: RevocationCheck,
  agent: string,
  action: Action,
  ctx: GateContext,
): Decision {
  const d = decide(compiled, revocations, agent, action, ctx);
  if (d.verdict !== 'deny' || !TEARDOWN_ACTIONS.includes(action) || ctx.node_tier === 'pinned') return d;
  const asPinned = decide(compiled, revocations, agent, action, { ...ctx, node_tier: 'pinned' });
  if (asPinned.verdict !== 'permit') return d;
  return {
    verdict: 'permit',
    rule: asPinned.rule,
    reason: `${asPinned.reason}; node-tier denial waived for teardown`,
    waiver: { waived_rule: d.rule, waived_reason: d.reason, node_tier: ctx.node_tier, decided_as: 'pinned' },
  };
}

/**
 * Validates an untrusted request and decides it. Never throws on any input: an invalid agent, an
 * action that is not one of the eight, or an invalid context is a denial with a `builtin:*` rule and
 * the offending field named.
 */
export function evaluate(
  compiled: CompiledPolicy,
  revocations: RevocationCheck,
  agent: unknown,
  action: unknown,
  context: unknown,
  teardown = false,
): Evaluation {
  if (typeof agent !== 'string' || agent.length === 0 || agent.length > MAX_AGENT) {
    return {
      decision: {
        verdict: 'deny',
        rule: BUILTIN_RULES.invalidAgent,
        reason: `agent must be a string of 1..${MAX_AGENT} characters`,
        field: 'agent',
      },
    };
  }
  if (!isAction(action)) {
    const shown = typeof action === 'string' ? JSON.stringify(action.slice(0, 64)) : typeof action;
    return {
      decision: {
        verdict: 'deny',
        rule: BUILTIN_RULES.unknownAction,
        reason: `action ${shown} is not a governed workload action (default deny)`,
        field: 'action',
      },
    };
  }
  const parsed = safeParseContext(context);
  if (!parsed.ok) {
    return {
      action,
      decision: {
        verdict: 'deny',
        rule: BUILTIN_RULES.invalidContext,
        reason: parsed.error.message,
        field: parsed.error.field ?? '$',
      },
    };
  }
  const ctx = parsed.context;
  const decision = (teardown ? decideTeardown : decide)(compiled, revocations, agent, action, ctx);
  return { action, context: ctx, decision };
}
