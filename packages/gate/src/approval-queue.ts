import { randomBytes } from 'node:crypto';
import type { ApprovalRequest, ApprovalStore } from './approval-store.js';
import { type Clock, systemClock } from './clock.js';
import type { GateContext } from './context.js';
import { type ApprovalRef, BUILTIN_RULES, type Decision } from './decision.js';
import { GateError } from './errors.js';
import type { Action } from './levels.js';
import {
  DECISION_SOURCE,
  type DecisionRecorder,
  decisionPayload,
  type RecordedDecision,
} from './recorder.js';

/** Options of {@link ApprovalQueue}. */
export interface ApprovalQueueOptions {
  /** Where requests are kept. */
  readonly store: ApprovalStore;
  /** Where approvals, rejections and expiries are chained (normally the gate's recorder). */
  readonly recorder: DecisionRecorder;
  /** Time source (default the system clock). */
  readonly clock?: Clock;
  /** How long a request waits for an operator before it expires (default 15 minutes). */
  readonly ttlMs?: number;
  /** How often a waiting check re-reads the store, for decisions made by another process (default: never). */
  readonly pollMs?: number;
  /** Most pending requests at once (default 10,000); more are refused with `approval_queue_full`. */
  readonly maxPending?: number;
  /** Id generator (default 16 random bytes as hex). */
  readonly newId?: () => string;
}

/** What a deferred check puts in the queue. */
export interface ApprovalInput {
  /** The agent that asked. */
  readonly agent: string;
  /** The action. */
  readonly action: Action;
  /** The validated context. */
  readonly context: GateContext;
  /** Whether it was a teardown check. */
  readonly teardown: boolean;
  /** The defer rule and reason. */
  readonly rule: string;
  /** See `rule`. */
  readonly reason: string;
  /** Overrides the queue's ttl for this request (ms). */
  readonly ttlMs?: number;
}

/** Default time a request waits for an operator: 15 minutes. */
export const DEFAULT_APPROVAL_TTL_MS: number = 15 * 60 * 1000;

/**
 * The approval queue of deferred actions. An operator approves or rejects a pending request; one not
 * decided by its `expires_at` expires (a denial). Every settlement is chained under the action's kind
 * with source `workload`, naming the defer event it settles. A deferred check waits with {@link wait}.
 */
export class ApprovalQueue {
  private readonly store: ApprovalStore;
  private readonly recorder: DecisionRecorder;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly pollMs: number | undefined;
  private readonly maxPending: number;
  private readonly newId: () => string;
  private readonly waiters = new Map<string, Set<() => void>>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(options: ApprovalQueueOptions) {
    this.store = options.store;
    this.recorder = options.recorder;
    this.clock = options.clock ?? systemClock;
    this.ttlMs = options.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
    this.pollMs = options.pollMs;
    this.maxPending = options.maxPending ?? 10_000;
    this.newId = options.newId ?? (() => randomBytes(16).toString('hex'));
  }

  /** A new pending request (not yet stored): the gate records the defer naming it, then {@link submit}s it. */
  prepare(input: ApprovalInput): ApprovalRequest {
    const now = this.clock.now();
    return {
      id: this.newId(),
      agent: input.agent,
      action: input.action,
      context: input.context,
      teardown: input.teardown,
      rule: input.rule,
      reason: input.reason,
      created_at: now,
      expires_at: now + Math.max(0, Math.floor(input.ttlMs ?? this.ttlMs)),
      state: 'pending',
    };
  }

  /** Stores a prepared request, naming the chain event of its defer decision. */
  submit(request: ApprovalRequest, deferEvent?: string): Promise<void> {
    return this.exclusive(async () => {
      const pending = (await this.store.list()).filter((r) => r.state === 'pending').length;
      if (pending >= this.maxPending) {
        throw new GateError('approval_queue_full', `the approval queue holds ${pending} pending requests`);
      }
      await this.store.put(deferEvent === undefined ? request : { ...request, defer_event: deferEvent });
    });
  }

  /** The request with this id (`approval_not_found` if none). Expires it first if it is overdue. */
  async get(id: string): Promise<ApprovalRequest> {
    await this.expire(id);
    return this.require(id);
  }

  /** Every request, oldest first, after expiring overdue ones; optionally only those in one state. */
  async list(state?: ApprovalRequest['state']): Promise<ApprovalRequest[]> {
    await this.expireDue();
    const all = await this.store.list();
    return state === undefined ? all : all.filter((r) => r.state === state);
  }

  /** Approves a pending request: the deferred action is permitted (chained). */
  approve(id: string, operator: string, note?: string): Promise<RecordedDecision> {
    return this.settle(id, 'approved', operator, note);
  }

  /** Rejects a pending request: the deferred action is denied (chained). */
  reject(id: string, operator: string, note?: string): Promise<RecordedDecision> {
    return this.settle(id, 'rejected', operator, note);
  }

  /** Expires every overdue pending request (each chained as a denial); returns how many. */
  async expireDue(): Promise<number> {
    const now = this.clock.now();
    const due = (await this.store.list()).filter((r) => r.state === 'pending' && r.expires_at <= now);
    let n = 0;
    for (const r of due) if (await this.expire(r.id)) n++;
    return n;
  }

  /** Removes settled requests decided before `before` (ms since the epoch); returns how many. */
  prune(before: number): Promise<number> {
    return this.exclusive(async () => {
      const old = (await this.store.list()).filter(
        (r) => r.state !== 'pending' && (r.decided_at ?? r.created_at) < before,
      );
      await this.store.remove(old.map((r) => r.id));
      return old.length;
    });
  }

  /**
   * Resolves when the request is approved (a permit), rejected (a deny) or expires (a deny with rule
   * `builtin:approval_expired`), whichever comes first. The timeout is the request's `expires_at`.
   */
  async wait(id: string): Promise<RecordedDecision> {
    const first = await this.get(id);
    if (first.state !== 'pending') return resolution(first);
    return new Promise<RecordedDecision>((resolve, reject) => {
      const cancels: (() => void)[] = [];
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        for (const c of cancels) c();
        this.waiters.get(id)?.delete(finish);
        this.require(id).then((r) => resolve(resolution(r)), reject);
      };
      const fail = (err: unknown): void => {
        if (done) return;
        done = true;
        for (const c of cancels) c();
        this.waiters.get(id)?.delete(finish);
        reject(err);
      };
      const set = this.waiters.get(id) ?? new Set<() => void>();
      this.waiters.set(id, set);
      set.add(finish);
      const arm = (): void => {
        const left = first.expires_at - this.clock.now();
        cancels.push(
          this.clock.setTimer(() => {
            if (this.clock.now() < first.expires_at) return arm();
            this.expire(id).then(finish, fail);
          }, left),
        );
      };
      arm();
      const poll = this.pollMs;
      if (poll !== undefined && poll > 0) {
        const tick = (): void => {
          cancels.push(
            this.clock.setTimer(() => {
              this.store.get(id).then((r) => {
                if (r === undefined || r.state !== 'pending') finish();
                else if (!done) tick();
              }, fail);
            }, poll),
          );
        };
        tick();
      }
    });
  }

  private async settle(
    id: string,
    state: 'approved' | 'rejected',
    operator: string,
    note: string | undefined,
  ): Promise<RecordedDecision> {
    if (typeof operator !== 'string' || operator.length === 0 || operator.length > 256) {
      throw new GateError('invalid_operator', 'operator must be a string of 1..256 characters', {
        field: 'operator',
      });
    }
    if (note !== undefined && (typeof note !== 'string' || note.length > 2048)) {
      throw new GateError('invalid_note', 'note must be a string of at most 2048 characters', {
        field: 'note',
      });
    }
    await this.expire(id);
    const decided = await this.exclusive(async () => {
      const r = await this.require(id);
      if (r.state !== 'pending') {
        const code = r.state === 'expired' ? 'approval_expired' : 'approval_already_decided';
        throw new GateError(code, `approval request ${id} is already ${r.state}`, { field: 'id' });
      }
      const next: ApprovalRequest = {
        ...r,
        state,
        decided_at: this.clock.now(),
        decided_by: operator,
        ...(note === undefined ? {} : { note }),
      };
      return this.record(next);
    });
    this.notify(id);
    return resolution(decided);
  }

  /** Expires `id` if it is pending and overdue; true if it did. */
  private async expire(id: string): Promise<boolean> {
    const changed = await this.exclusive(async () => {
      const r = await this.store.get(id);
      if (r?.state !== 'pending' || r.expires_at > this.clock.now()) return false;
      await this.record({ ...r, state: 'expired', decided_at: this.clock.now() });
      return true;
    });
    if (changed) this.notify(id);
    return changed;
  }

  /** Chains a settlement, then stores it with the event hash. */
  private async record(next: ApprovalRequest): Promise<ApprovalRequest> {
    const d = resolution(next);
    let hash: string;
    try {
      const ev = await this.recorder.append(
        DECISION_SOURCE,
        next.action,
        decisionPayload({
          agent: next.agent,
          action: next.action,
          decision: d,
          teardown: next.teardown,
          context: next.context,
          ...(next.defer_event === undefined ? {} : { defer_event: next.defer_event }),
        }),
      );
      hash = ev.hash;
    } catch (err) {
      throw new GateError('decision_not_recorded', `could not chain the ${next.state} approval ${next.id}`, {
        cause: err,
      });
    }
    const stored: ApprovalRequest = { ...next, resolution_event: hash };
    await this.store.put(stored);
    return stored;
  }

  private async require(id: string): Promise<ApprovalRequest> {
    const r = typeof id === 'string' ? await this.store.get(id) : undefined;
    if (!r) throw new GateError('approval_not_found', `no approval request ${String(id)}`, { field: 'id' });
    return r;
  }

  private notify(id: string): void {
    const set = this.waiters.get(id);
    if (!set) return;
    this.waiters.delete(id);
    for (const f of [...set]) f();
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
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

/** The decision a request stands for: defer while pending, permit when approved, deny otherwise. */
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
      d = { verdict: 'permit', rule: r.rule, reason: `approved by ${by}${note}`, approval };
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
