import type { JsonValue } from '@heddle/envelope';
import { contextForChain, type GateContext } from './context.js';
import type { ApprovalRef, Decision, Waiver } from './decision.js';
import { isAction } from './levels.js';

/**
 * Where decisions are chained: structurally the `append` of an `@heddle/chain` chain, so the gate
 * does not depend on a particular chain store. `payload` is integers-only JSON.
 */
export interface DecisionRecorder {
  /** Appends one event and resolves with its hash once it is durable. */
  append(source: string, kind: string, payload: JsonValue): Promise<{ readonly hash: string }>;
}

/** The chain source of every gate decision. */
export const DECISION_SOURCE = 'workload';

/** The chain kind of a decision about something that is not one of the eight actions. */
export const REFUSE_KIND = 'workload.refuse';

/** A decision together with the hash of the chain event that records it (the decision's id). */
export type RecordedDecision = Decision & { readonly event_hash: string };

/** The chain kind of a decision: the action itself, or `workload.refuse` for an unknown action. */
export function decisionKind(action: unknown): string {
  return isAction(action) ? action : REFUSE_KIND;
}

/** What the payload of a decision event is built from. */
export interface DecisionRecord {
  /** The agent as given (non-strings are recorded as null). */
  readonly agent: unknown;
  /** The action as given. */
  readonly action: unknown;
  /** The decision. */
  readonly decision: Decision;
  /** Whether this was a teardown check. */
  readonly teardown: boolean;
  /** The validated context, when it was valid. */
  readonly context?: GateContext;
  /** The policy that decided, when one did. */
  readonly policy?: { readonly name: string; readonly hash: string };
  /** The chain hash of the defer decision an approval settles. */
  readonly defer_event?: string;
}

/**
 * The chained payload of a decision: `{agent, action, verdict, rule, reason, teardown, policy?,
 * context?, field?, waiver?, approval?}`. Integers only (the context's cost is in basis points), and
 * every string is made well-formed so that hostile input cannot make a decision unrecordable.
 */
export function decisionPayload(r: DecisionRecord): JsonValue {
  const d = r.decision;
  const out: { [k: string]: JsonValue } = {
    agent: typeof r.agent === 'string' ? clean(r.agent, 256) : null,
    action: typeof r.action === 'string' ? clean(r.action, 128) : `(${typeof r.action})`,
    verdict: d.verdict,
    rule: clean(d.rule, 256),
    reason: clean(d.reason, 2048),
    teardown: r.teardown,
  };
  if (r.policy) out.policy = { name: clean(r.policy.name, 128), hash: r.policy.hash };
  if (r.context) out.context = contextForChain(r.context);
  if (d.verdict === 'deny' && d.field !== undefined) out.field = clean(d.field, 256);
  if (d.verdict === 'permit' && d.waiver) out.waiver = waiverJson(d.waiver);
  if (d.approval) out.approval = approvalJson(d.approval, r.defer_event);
  return out;
}

function waiverJson(w: Waiver): JsonValue {
  return {
    waived_rule: clean(w.waived_rule, 256),
    waived_reason: clean(w.waived_reason, 2048),
    node_tier: w.node_tier,
    decided_as: w.decided_as,
  };
}

function approvalJson(a: ApprovalRef, deferEvent: string | undefined): JsonValue {
  const out: { [k: string]: JsonValue } = { id: a.id, state: a.state, expires_at: a.expires_at };
  if (a.decided_by !== undefined) out.decided_by = clean(a.decided_by, 256);
  if (a.note !== undefined) out.note = clean(a.note, 2048);
  if (deferEvent !== undefined) out.defer_event = deferEvent;
  return out;
}

function clean(s: string, max: number): string {
  const t = s.length > max ? `${s.slice(0, max)}...` : s;
  return t.toWellFormed();
}
