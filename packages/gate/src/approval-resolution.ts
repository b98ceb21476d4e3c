import type { ApprovalOutcome, ApprovalRequest } from './approval-store.js';
import { type ApprovalRef, BUILTIN_RULES, type Decision } from './decision.js';
import type { RecordedDecision } from './recorder.js';

/** A request decided again against the policy and revocations in force now (see {@link ApprovalDecider}). */
export interface ApprovalRedecision {
  /** The decision the request's agent, action and context get now. */
  readonly decision: Decision;
  /** The policy that decided, chained with the approval. */
  readonly policy?: { readonly name: string; readonly hash: string };
}

/**
 * Decides an approval request again with the current policy and revocations. A `Gate` given an
 * approval queue installs its own; an approval never becomes a permit without one.
 */
export type ApprovalDecider = (request: ApprovalRequest) => ApprovalRedecision;

/**
 * What an operator's approval of `r` comes to, given `now`, the request decided again. The approval
 * overrides only the defer rule that caused the deferral: when `now` is a defer by that rule, the
 * action is permitted (rule: the defer rule). When `now` is a permit, it stands. Anything else is a
 * deny naming why: revoked since (`builtin:revoked`, `builtin:revocations_unavailable`), a deny rule
 * of a changed policy, the default deny of a policy that no longer defers, or another defer rule the
 * approval does not cover.
 */
export function approvedOutcome(
  r: ApprovalRequest,
  now: Decision,
  by: string,
  note?: string,
): ApprovalOutcome {
  const approved = `approved by ${by}${note ? `: ${note}` : ''}`;
  switch (now.verdict) {
    case 'defer':
      if (now.rule === r.rule) return { verdict: 'permit', rule: r.rule, reason: approved };
      return {
        verdict: 'deny',
        rule: now.rule,
        reason: `${approved}, but denied on re-decision: rule ${now.rule} now defers (${now.reason}); the approval of rule ${r.rule} does not cover it`,
      };
    case 'permit':
      return { verdict: 'permit', rule: now.rule, reason: `${now.reason} (also ${approved})` };
    default:
      return {
        verdict: 'deny',
        rule: now.rule,
        reason: `${approved}, but denied on re-decision: ${now.reason}`,
      };
  }
}

/** The reference to a request carried in decisions. */
export function approvalRef(r: ApprovalRequest): ApprovalRef {
  return {
    id: r.id,
    state: r.state,
    expires_at: r.expires_at,
    ...(r.decided_by === undefined ? {} : { decided_by: r.decided_by }),
    ...(r.note === undefined ? {} : { note: r.note }),
  };
}

/**
 * The decision a request stands for: defer while pending; when approved, its re-decided `outcome`
 * (an approval made where there was no gate to re-decide it, e.g. by an operator's process over a
 * shared store, is still a defer until the waiting gate re-decides it); deny when rejected or expired.
 */
export function resolution(r: ApprovalRequest): RecordedDecision {
  const approval = approvalRef(r);
  const event_hash = r.resolution_event ?? r.defer_event ?? '';
  const by = r.decided_by ?? 'unknown';
  const note = r.note ? `: ${r.note}` : '';
  let d: Decision;
  switch (r.state) {
    case 'pending':
      d = { verdict: 'defer', rule: r.rule, reason: r.reason, approval };
      break;
    case 'approved':
      d = r.outcome
        ? { verdict: r.outcome.verdict, rule: r.outcome.rule, reason: r.outcome.reason, approval }
        : {
            verdict: 'defer',
            rule: r.rule,
            reason: `approved by ${by}${note}; not permitted until the gate re-decides it against the current policy and revocations`,
            approval,
          };
      break;
    case 'rejected':
      d = { verdict: 'deny', rule: r.rule, reason: `rejected by ${by}${note}`, approval };
      break;
    default:
      d = {
        verdict: 'deny',
        rule: BUILTIN_RULES.approvalExpired,
        reason: `approval request ${r.id} (rule ${r.rule}) expired without a decision`,
        approval,
      };
  }
  return { ...d, event_hash };
}
