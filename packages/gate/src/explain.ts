import type { RevocationCheck } from '@heddle/model';
import { type CompiledPolicy, describeMismatch, mismatch, prepareContext } from './compile.js';
import { safeParseContext } from './context.js';
import { BUILTIN_RULES } from './decision.js';
import { ACTIONS, ALL_ACTIONS, isAction } from './levels.js';
import type { RuleEffect } from './policy.js';
import { checkRevocations } from './revocation.js';

/** How one evaluation step or policy rule applied to a request. */
export interface RuleTrace {
  /** The rule id (`builtin:*` for the gate's own steps). */
  readonly rule: string;
  /** The rule's effect (`deny` for the built-in steps). */
  readonly effect: RuleEffect;
  /** `match`: its conditions hold; `no_match`: one fails; `not_applicable`: it does not cover the action. */
  readonly result: 'match' | 'no_match' | 'not_applicable';
  /** The first failing condition (a rule field name). */
  readonly failed?: string;
  /** A sentence for people. */
  readonly detail?: string;
}

/**
 * Traces a request through the evaluation order: the built-in steps (revocation, secrets need
 * pinned), then every rule in file order. The decision itself is `decide`'s; this says why. An
 * invalid request yields one `no_match` step naming the invalid field.
 */
export function explain(
  compiled: CompiledPolicy,
  revocations: RevocationCheck,
  agent: string,
  action: unknown,
  context: unknown,
): RuleTrace[] {
  if (!isAction(action)) {
    return [
      {
        rule: BUILTIN_RULES.unknownAction,
        effect: 'deny',
        result: 'match',
        failed: 'action',
        detail: `not one of ${ACTIONS.join(', ')}`,
      },
    ];
  }
  const parsed = safeParseContext(context);
  if (!parsed.ok) {
    return [
      {
        rule: BUILTIN_RULES.invalidContext,
        effect: 'deny',
        result: 'match',
        failed: parsed.error.field ?? '$',
        detail: parsed.error.message,
      },
    ];
  }
  const ctx = parsed.context;
  const out: RuleTrace[] = [];
  const revoked = checkRevocations(revocations, ctx);
  out.push(
    revoked
      ? { rule: revoked.rule, effect: 'deny', result: 'match', failed: revoked.field, detail: revoked.reason }
      : { rule: BUILTIN_RULES.revoked, effect: 'deny', result: 'no_match' },
  );
  const secrets = ctx.secrets && ctx.node_tier !== 'pinned';
  out.push({
    rule: BUILTIN_RULES.secretsNeedPinned,
    effect: 'deny',
    result: secrets ? 'match' : 'no_match',
    ...(secrets ? { failed: 'node_tier', detail: `secrets need a pinned node (is ${ctx.node_tier})` } : {}),
  });
  const p = prepareContext(agent, ctx);
  const covering = new Set(compiled.byAction[ACTIONS.indexOf(action)] ?? []);
  for (const r of compiled.rules) {
    if (!covering.has(r)) {
      const acts = r.rule.actions;
      out.push({
        rule: r.rule.id,
        effect: r.effect,
        result: 'not_applicable',
        detail: `covers ${acts.includes(ALL_ACTIONS) ? ALL_ACTIONS : acts.join(', ')} only`,
      });
      continue;
    }
    const failed = mismatch(r, p);
    out.push(
      failed === null
        ? { rule: r.rule.id, effect: r.effect, result: 'match' }
        : {
            rule: r.rule.id,
            effect: r.effect,
            result: 'no_match',
            failed,
            detail: describeMismatch(r, failed, p),
          },
    );
  }
  return out;
}
