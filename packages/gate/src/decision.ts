import type { NodeTier } from '@heddle/model';

/** Rule ids the gate itself decides with (a policy cannot use the `builtin:` prefix). */
export const BUILTIN_RULES = {
  invalidAgent: 'builtin:invalid_agent',
  unknownAction: 'builtin:unknown_action',
  invalidContext: 'builtin:invalid_context',
  revoked: 'builtin:revoked',
  revocationsUnavailable: 'builtin:revocations_unavailable',
  secretsNeedPinned: 'builtin:secrets_need_pinned',
  defaultDeny: 'builtin:default_deny',
  approvalExpired: 'builtin:approval_expired',
  approvalUnavailable: 'builtin:approval_unavailable',
} as const;

/** What the teardown waiver waived: recorded with the permit it produced. */
export interface Waiver {
  /** The rule whose denial was waived. */
  readonly waived_rule: string;
  /** That denial's reason. */
  readonly waived_reason: string;
  /** The node's actual tier. */
  readonly node_tier: NodeTier;
  /** The tier the action was re-decided at. */
  readonly decided_as: 'pinned';
}

/** How a deferred action was settled by the approval queue. */
export interface ApprovalRef {
  /** The approval request id. */
  readonly id: string;
  /** pending (on a defer), or how it ended. */
  readonly state: 'pending' | 'approved' | 'rejected' | 'expired';
  /** When the request expires (ms since the epoch). */
  readonly expires_at: number;
  /** The operator who decided it. */
  readonly decided_by?: string;
  /** The operator's note. */
  readonly note?: string;
}

/** The action may proceed. */
export interface PermitDecision {
  readonly verdict: 'permit';
  /** The deciding rule. */
  readonly rule: string;
  /** Why, for people. */
  readonly reason: string;
  /** Present when the teardown waiver turned a denial into this permit. */
  readonly waiver?: Waiver;
  /** Present when an operator approved a deferred action. */
  readonly approval?: ApprovalRef;
}

/** The action must not proceed. */
export interface DenyDecision {
  readonly verdict: 'deny';
  /** The deciding rule (`builtin:*` for the gate's own checks). */
  readonly rule: string;
  /** Why, naming the field or condition. */
  readonly reason: string;
  /** The offending input field, for an invalid context, agent or action. */
  readonly field?: string;
  /** Present when an operator rejected a deferred action or it expired. */
  readonly approval?: ApprovalRef;
}

/** A human must decide; the action must not proceed until then. */
export interface DeferDecision {
  readonly verdict: 'defer';
  /** The defer rule that matched. */
  readonly rule: string;
  /** Why, for the operator. */
  readonly reason: string;
  /** The queued approval request, when the gate has an approval queue. */
  readonly approval?: ApprovalRef;
}

/** A gate decision: `permit | deny{reason, rule} | defer{reason}`. */
export type Decision = PermitDecision | DenyDecision | DeferDecision;
