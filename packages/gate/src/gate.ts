import type { ApprovalQueue } from './approval-queue.js';
import { approvalRef } from './approval-queue.js';
import { type CompiledPolicy, compilePolicy } from './compile.js';
import { type Evaluation, evaluate } from './decide.js';
import type { Decision } from './decision.js';
import { GateError } from './errors.js';
import { explain, type RuleTrace } from './explain.js';
import type { Policy } from './policy.js';
import {
  DECISION_SOURCE,
  type DecisionRecorder,
  decisionKind,
  decisionPayload,
  type RecordedDecision,
} from './recorder.js';
import { RevocationSet } from './revocation.js';

/** Options of {@link Gate}. */
export interface GateOptions {
  /** A validated policy (see `parsePolicy`, `loadPolicyFile`). */
  readonly policy: Policy;
  /** Where every decision is chained (an `@heddle/chain` chain fits). */
  readonly recorder: DecisionRecorder;
  /** Revoked references (default none). */
  readonly revocations?: RevocationSet;
  /** Where deferred actions wait for an operator (default: none, a defer is returned as is). */
  readonly approvals?: ApprovalQueue;
}

/** Options of {@link Gate.checkAndWait}. */
export interface WaitOptions {
  /** Use the teardown waiver ({@link Gate.checkTeardown}). */
  readonly teardown?: boolean;
  /** How long to wait for an operator before the request expires (default: the queue's ttl). */
  readonly timeoutMs?: number;
}

/**
 * The governance gate (DESIGN 7). Default deny: an action is permitted only when a permit rule of the
 * policy matches and nothing before it denies. Every decision, including refusals of malformed
 * requests, is chained with source `workload` and the action as kind (`workload.refuse` for an action
 * that is not one of the eight) before it is returned; if it cannot be chained, the check rejects with
 * `decision_not_recorded` and nothing may proceed.
 */
export class Gate {
  private compiled: CompiledPolicy;
  private revocations: RevocationSet;
  private readonly recorder: DecisionRecorder;
  private readonly approvals: ApprovalQueue | undefined;

  constructor(options: GateOptions) {
    this.compiled = compilePolicy(options.policy);
    this.revocations = options.revocations ?? new RevocationSet();
    this.recorder = options.recorder;
    this.approvals = options.approvals;
  }

  /** The policy in force, compiled, with its hash. */
  get policy(): CompiledPolicy {
    return this.compiled;
  }

  /** Replaces the policy (validated); later checks use it. */
  setPolicy(policy: Policy): void {
    this.compiled = compilePolicy(policy);
  }

  /** Replaces the revocation set; later checks use it. */
  setRevocations(revocations: RevocationSet): void {
    this.revocations = revocations;
  }

  /** `check(agent, action, context) -> permit | deny{reason, rule} | defer{reason}`, chained. */
  check(agent: string, action: string, context: unknown): Promise<RecordedDecision> {
    return this.run(agent, action, context, false, undefined);
  }

  /**
   * {@link check} for stop and unload of what is already placed: a denial caused by the node tier
   * alone is waived (the permit carries and chains the waiver). See `decideTeardown`.
   */
  checkTeardown(agent: string, action: string, context: unknown): Promise<RecordedDecision> {
    return this.run(agent, action, context, true, undefined);
  }

  /**
   * Checks, and when the decision is a defer queued for approval, waits until an operator approves
   * (permit) or rejects (deny) it or it expires after `timeoutMs` (deny, rule `builtin:approval_expired`).
   */
  async checkAndWait(
    agent: string,
    action: string,
    context: unknown,
    options: WaitOptions = {},
  ): Promise<RecordedDecision> {
    const d = await this.run(agent, action, context, options.teardown === true, options.timeoutMs);
    if (d.verdict !== 'defer' || d.approval === undefined || this.approvals === undefined) return d;
    return this.approvals.wait(d.approval.id);
  }

  /** Decides without chaining or queueing (a dry run, as `heddle policy check` does). */
  dryRun(agent: unknown, action: unknown, context: unknown, teardown = false): Evaluation {
    return evaluate(this.compiled, this.revocations, agent, action, context, teardown);
  }

  /** How each step and rule applies to a request (see `explain`). */
  explain(agent: string, action: string, context: unknown): RuleTrace[] {
    return explain(this.compiled, this.revocations, agent, action, context);
  }

  private async run(
    agent: unknown,
    action: unknown,
    context: unknown,
    teardown: boolean,
    ttlMs: number | undefined,
  ): Promise<RecordedDecision> {
    const compiled = this.compiled;
    const ev = evaluate(compiled, this.revocations, agent, action, context, teardown);
    let decision: Decision = ev.decision;
    const queue = this.approvals;
    const draft =
      decision.verdict === 'defer' && queue && ev.action && ev.context && typeof agent === 'string'
        ? queue.prepare({
            agent,
            action: ev.action,
            context: ev.context,
            teardown,
            rule: decision.rule,
            reason: decision.reason,
            ...(ttlMs === undefined ? {} : { ttlMs }),
          })
        : undefined;
    if (draft) decision = { ...decision, approval: approvalRef(draft) } as Decision;
    let hash: string;
    try {
      const payload = decisionPayload({
        agent,
        action,
        decision,
        teardown,
        policy: { name: compiled.policy.name, hash: compiled.hash },
        ...(ev.context === undefined ? {} : { context: ev.context }),
      });
      hash = (await this.recorder.append(DECISION_SOURCE, decisionKind(action), payload)).hash;
    } catch (err) {
      throw new GateError('decision_not_recorded', `the ${decision.verdict} decision could not be chained`, {
        cause: err,
      });
    }
    if (draft && queue) await queue.submit(draft, hash);
    return { ...decision, event_hash: hash };
  }
}
