import { randomBytes } from 'node:crypto';
import {
  type ApprovalDecider,
  type ApprovalRedecision,
  approvedOutcome,
  resolution,
} from './approval-resolution.js';
import { chainSettlement, checkSettlement } from './approval-settle.js';
import type { ApprovalInput, ApprovalRequest, ApprovalStore } from './approval-store.js';
import { waitForSettlement } from './approval-wait.js';
import { type Clock, systemClock } from './clock.js';
import { GateError } from './errors.js';
import type { DecisionRecorder, RecordedDecision } from './recorder.js';

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
  /**
   * Re-decides a request when an operator approves it (a `Gate` given this queue installs its own,
   * see {@link ApprovalQueue.setDecider}). Without one an approval stays a defer until a queue with a
   * decider (the waiting gate's) re-decides it.
   */
  readonly decide?: ApprovalDecider;
}

/** A place in the queue held by {@link ApprovalQueue.reserve} until the request is submitted or released. */
export interface ApprovalReservation {
  /** Gives the place back (when the request will not be submitted). Idempotent. */
  release(): void;
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
  private readonly reservations = new Set<ApprovalReservation>();
  private decider: ApprovalDecider | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(options: ApprovalQueueOptions) {
    this.store = options.store;
    this.recorder = options.recorder;
    this.clock = options.clock ?? systemClock;
    this.ttlMs = options.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
    this.pollMs = options.pollMs;
    this.maxPending = options.maxPending ?? 10_000;
    this.newId = options.newId ?? (() => randomBytes(16).toString('hex'));
    this.decider = options.decide;
  }

  /**
   * Sets how approvals are re-decided: against the policy and revocations in force when the operator
   * approves. `Gate` calls this with its own when it is given the queue.
   */
  setDecider(decider: ApprovalDecider): void {
    this.decider = decider;
  }

  /**
   * A new pending request (not yet stored). The gate {@link reserve}s a place, records the defer
   * naming the request, then {@link submit}s it, so that no chained defer names a request that the
   * queue refused.
   */
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

  /** Holds a place for one request; refused with `approval_queue_full` when the queue is full. */
  reserve(): Promise<ApprovalReservation> {
    return this.exclusive(async () => {
      await this.checkCapacity();
      const r: ApprovalReservation = { release: () => void this.reservations.delete(r) };
      this.reservations.add(r);
      return r;
    });
  }

  /**
   * Stores a prepared request, naming the chain event of its defer decision, in the place `reservation`
   * holds (which it releases), or in a free place (else `approval_queue_full`).
   */
  submit(request: ApprovalRequest, deferEvent?: string, reservation?: ApprovalReservation): Promise<void> {
    return this.exclusive(async () => {
      try {
        if (reservation === undefined || !this.reservations.has(reservation)) await this.checkCapacity();
        await this.store.put(deferEvent === undefined ? request : { ...request, defer_event: deferEvent });
      } finally {
        reservation?.release();
      }
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

  /**
   * Approves a pending request. The request is decided again against the policy and revocations in
   * force now, and the approval overrides only the defer rule that caused the deferral: the result is
   * a permit, or a deny naming why (revoked since, a changed policy). Chained. A queue without a
   * decider (an operator's process over a shared store, see {@link setDecider}) records the approval
   * as a defer; the waiting gate's queue re-decides it when it sees it.
   */
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
   * Resolves when the request is approved (its re-decided outcome: a permit, or a deny naming why),
   * rejected (a deny) or expires (a deny with rule `builtin:approval_expired`), whichever comes first.
   * The timeout is the request's `expires_at`.
   */
  async wait(id: string): Promise<RecordedDecision> {
    await this.expire(id);
    const first = await this.settled(id);
    if (first.state !== 'pending') return resolution(first);
    return waitForSettlement(
      {
        clock: this.clock,
        pollMs: this.pollMs,
        waiters: this.waiters,
        peek: (x) => this.store.get(x),
        settled: (x) => this.settled(x),
        expire: (x) => this.expire(x),
      },
      first,
    );
  }

  private async settle(
    id: string,
    state: 'approved' | 'rejected',
    operator: string,
    note: string | undefined,
  ): Promise<RecordedDecision> {
    checkSettlement(operator, note);
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
      return state === 'approved' && this.decider ? this.redecide(next, this.decider) : this.record(next);
    });
    this.notify(id);
    return resolution(decided);
  }

  /** The request, with an approval made elsewhere (no decider there) re-decided here when it can be. */
  private async settled(id: string): Promise<ApprovalRequest> {
    const r = await this.require(id);
    const decider = this.decider;
    if (r.state !== 'approved' || r.outcome !== undefined || decider === undefined) return r;
    const done = await this.exclusive(async () => {
      const cur = await this.require(id);
      if (cur.state !== 'approved' || cur.outcome !== undefined) return cur;
      return this.redecide(cur, decider);
    });
    this.notify(id);
    return done;
  }

  /** Re-decides an approved request, then chains and stores the outcome. */
  private redecide(r: ApprovalRequest, decider: ApprovalDecider): Promise<ApprovalRequest> {
    const re = decider(r);
    const outcome = approvedOutcome(r, re.decision, r.decided_by ?? 'unknown', r.note);
    return this.record({ ...r, outcome }, re.policy);
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
  private async record(
    next: ApprovalRequest,
    policy?: ApprovalRedecision['policy'],
  ): Promise<ApprovalRequest> {
    const stored: ApprovalRequest = {
      ...next,
      resolution_event: await chainSettlement(this.recorder, next, policy),
    };
    await this.store.put(stored);
    return stored;
  }

  private async checkCapacity(): Promise<void> {
    const pending = (await this.store.list()).filter((r) => r.state === 'pending').length;
    if (pending + this.reservations.size >= this.maxPending) {
      throw new GateError('approval_queue_full', `the approval queue holds ${pending} pending requests`);
    }
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
