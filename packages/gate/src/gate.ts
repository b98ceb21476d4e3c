import { errorMessage } from '@heddle/envelope';
import type { RevocationCheck } from '@heddle/model';
import type { ApprovalQueue, ApprovalReservation } from './approval-queue.js';
import { type ApprovalRedecision, approvalRef } from './approval-resolution.js';
import type { ApprovalRequest } from './approval-store.js';
import { type CompiledPolicy, compilePolicy } from './compile.js';
import { decide, decideTeardown, type Evaluation, evaluate } from './decide.js';
import { BUILTIN_RULES, type Decision } from './decision.js';
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
  /**
   * The revocation check (default none revoked): a `RevocationSet`, or anything with the structural
   * `firstRevoked` of {@link RevocationCheck}, such as the signed `RevocationList` of `@heddle/package`
   * (load it with `loadOrFailClosed`: a list that cannot be loaded then denies everything).
   */
  readonly revocations?: RevocationCheck;
  /**
   * Where deferred actions wait for an operator (default: none, a defer is returned as is). The gate
   * installs itself as the queue's decider: an approval is re-decided against this gate's policy and
   * revocations at the time of approval.
   */
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
 * The governance gate (docs/policy.md). Default deny: an action is permitted only when a permit rule of the
 * policy matches and nothing before it denies. Every decision, including refusals of malformed
 * requests, is chained with source `workload` and the action as kind (`workload.refuse` for an action
 * that is not one of the eight) before it is returned; if it cannot be chained, the check rejects with
 * `decision_not_recorded` and nothing may proceed.
 */
export class Gate {
  private compiled: CompiledPolicy;
  private revocations: RevocationCheck;
  private readonly recorder: DecisionRecorder;
  private readonly approvals: ApprovalQueue | undefined;

  constructor(options: GateOptions) {
    this.compiled = compilePolicy(options.policy);
    this.revocations = options.revocations ?? new RevocationSet();
    this.recorder = options.recorder;
    this.approvals = options.approvals;
    this.approvals?.setDecider((r) => this.redecide(r));
  }

  /** The policy in force, compiled, with its hash. */
  get policy(): CompiledPolicy {
    return this.compiled;
  }

  /** Replaces the policy (validated); later checks (and approvals) use it. */
  setPolicy(policy: Policy): void {
    this.compiled = compilePolicy(policy);
  }

  /** Replaces the revocation check; later checks (and approvals) use it. */
  setRevocations(revocations: RevocationCheck): void {
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
   * Checks, and when the decision is a defer queued for approval, waits until an operator approves it
   * (re-decided against the policy and revocations in force then: a permit, or a deny naming why),
   * rejects it (deny) or it expires after `timeoutMs` (deny, rule `builtin:approval_expired`).
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

  /** Decides an approval request again with the policy and revocations in force now. */
  private redecide(r: ApprovalRequest): ApprovalRedecision {
    const compiled = this.compiled;
    const decision = (r.teardown ? decideTeardown : decide)(
      compiled,
      this.revocations,
      r.agent,
      r.action,
      r.context,
    );
    return { decision, policy: { name: compiled.policy.name, hash: compiled.hash } };
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
    let draft =
      decision.verdict === 'defer' && queue && ev.action && ev.context && typeof agent === 'string'
        ? queue.prepare({
            agent,
            action: ev.action,
            context: ev.context,
            teardown,
            rule: decision.rule,
            reason: decision.reason,
            ...ttlOf(compiled, decision.rule, ttlMs),
          })
        : undefined;
    // Hold a place in the queue before the defer naming the request is chained, so that no chained
    // defer names a request the queue refused. A full queue: the defer is chained without a request.
    let reservation: ApprovalReservation | undefined;
    let refused: unknown;
    if (draft && queue) {
      try {
        reservation = await queue.reserve();
      } catch (err) {
        refused = err;
        draft = undefined;
        decision = { ...decision, reason: `${decision.reason} (not queued: ${errorMessage(err)})` };
      }
    }
    // cast: a defer decision (draft is set only for defer) carries its approval reference
    if (draft) decision = { ...decision, approval: approvalRef(draft) } as Decision;
    const policy = { name: compiled.policy.name, hash: compiled.hash };
    let hash: string;
    try {
      hash = await this.chain(agent, action, decision, teardown, policy, ev.context);
    } catch (err) {
      reservation?.release();
      throw err;
    }
    if (refused !== undefined) throw refused;
    if (draft && queue) {
      try {
        await queue.submit(draft, hash, reservation);
      } catch (err) {
        // The chained defer names a request that could not be stored: chain that it is void.
        const why = `approval request ${draft.id} (defer event ${hash}) could not be queued: ${errorMessage(err)}`;
        const deny: Decision = { verdict: 'deny', rule: BUILTIN_RULES.approvalUnavailable, reason: why };
        await this.chain(agent, action, deny, teardown, policy, ev.context);
        throw new GateError('approval_not_queued', why, { cause: err });
      }
    }
    return { ...decision, event_hash: hash };
  }

  /** Chains one decision; rejects with `decision_not_recorded` when it cannot. */
  private async chain(
    agent: unknown,
    action: unknown,
    decision: Decision,
    teardown: boolean,
    policy: { name: string; hash: string },
    context: Evaluation['context'],
  ): Promise<string> {
    try {
      const payload = decisionPayload({
        agent,
        action,
        decision,
        teardown,
        policy,
        ...(context === undefined ? {} : { context }),
      });
      return (await this.recorder.append(DECISION_SOURCE, decisionKind(action), payload)).hash;
    } catch (err) {
      throw new GateError('decision_not_recorded', `the ${decision.verdict} decision could not be chained`, {
        cause: err,
      });
    }
  }
}

/** The ttl of a request deferred by `rule`: the caller's, else the rule's `approval_ttl_secs`, else the queue's. */
function ttlOf(compiled: CompiledPolicy, rule: string, ttlMs: number | undefined): { ttlMs?: number } {
  if (ttlMs !== undefined) return { ttlMs };
  const secs = compiled.policy.rules.find((r) => r.id === rule)?.approval_ttl_secs;
  return secs === undefined ? {} : { ttlMs: secs * 1000 };
}
