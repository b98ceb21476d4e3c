import { errorMessage } from '@heddle/envelope';
import type { ApprovalQueue, ApprovalRequest, GateContext } from '@heddle/gate';
import type {
  ApprovalEventKind,
  ApprovalListener,
  ApprovalView,
  ApprovalViewState,
  HeldPlaceStatus,
} from './approval-view.js';
import { PlaneError } from './errors.js';
import type { HeldPlaceRecord, HeldPlaces } from './held-places.js';
import type { PlaceResult } from './place.js';

/** The gate check an approval covers: a place proceeds past it without asking the gate again. */
export interface ApprovalGrant {
  /** The approval request. */
  readonly approval_id: string;
  /** Chain hash of the approval's re-decision (the permit naming the approver). */
  readonly event: string;
  /** The action and context that were deferred and approved. */
  readonly action: string;
  readonly context: GateContext;
}

/** Whether `grant` covers a check of `action` with `context` (the very context approved). */
export function grantCovers(
  grant: Pick<ApprovalGrant, 'action' | 'context'>,
  action: string,
  context: GateContext,
): boolean {
  return grant.action === action && stableJson(grant.context) === stableJson(context);
}

/** JSON text with object keys sorted (a gate context holds a fractional `resource_cost`, so not canonical JSON). */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Places a held order once its approval permits it (bound by the control plane to `placeApproved`). */
export type ApprovedPlacer = (held: HeldPlaceRecord, grant: ApprovalGrant) => Promise<PlaceResult>;

/**
 * The controller's side of the gate's approval queue (docs/operator-guide.md, "Approvals"): the
 * places held for approval (durable, {@link HeldPlaces}), what an operator sees of each request
 * ({@link ApprovalView}), approve (the request is decided again by the gate; a permit places the held
 * order through the engine, past exactly the approved check) and reject, expiry, and the events told
 * to listeners.
 */
export class PlaneApprovals {
  readonly queue: ApprovalQueue;
  readonly held: HeldPlaces;
  readonly #place: ApprovedPlacer;
  readonly #listeners = new Set<ApprovalListener>();

  constructor(queue: ApprovalQueue, held: HeldPlaces, place: ApprovedPlacer) {
    this.queue = queue;
    this.held = held;
    this.#place = place;
  }

  /** Adds a listener of approval events; returns the function that removes it. */
  subscribe(listener: ApprovalListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Records a new held place and tells the listeners (`requested`). */
  async hold(record: HeldPlaceRecord): Promise<void> {
    this.held.put(record);
    this.#emit('requested', await this.queue.get(record.approval_id));
  }

  /** Every request (oldest first, overdue ones expired first), optionally only those in `state`. */
  async list(state?: ApprovalViewState): Promise<ApprovalView[]> {
    const all = await this.queue.list();
    for (const r of all) this.#follow(r);
    return all.filter((r) => state === undefined || r.state === state).map((r) => this.view(r));
  }

  /** One request (`approval_not_found` otherwise). */
  async get(id: string): Promise<ApprovalView> {
    const r = await this.queue.get(checkId(id));
    this.#follow(r);
    return this.view(r);
  }

  /** Expires every overdue request (each chained as a denial by the gate); returns how many. */
  async expireDue(): Promise<number> {
    const n = await this.queue.expireDue();
    if (n > 0) for (const r of await this.queue.list('expired')) this.#follow(r);
    return n;
  }

  /**
   * Approves a pending request as `by` (chained with the note). The gate decides it again against the
   * policy and revocations in force now; a permit places the held order through the engine (the
   * approved check passes without a new request, every other check as usual), a deny refuses it
   * naming why. Answers once the place is done.
   */
  async approve(id: string, by: string, note?: string): Promise<ApprovalView> {
    const d = await this.queue.approve(checkId(id), by, note);
    const r = await this.queue.get(id);
    this.#emit('approved', r);
    const held = this.held.get(id);
    if (held === undefined || held.status !== 'held') return this.view(r);
    if (d.verdict !== 'permit') {
      this.#settle(held, 'refused', { detail: d.reason });
      this.#emit('failed', r);
      return this.view(r);
    }
    const grant: ApprovalGrant = {
      approval_id: id,
      event: d.event_hash,
      action: held.action,
      context: held.context,
    };
    try {
      const result = await this.#place(held, grant);
      this.#settle(held, result.status === 'placed' ? 'placed' : 'unsettled', {
        order_id: result.order_id,
        instance_id: result.instance?.instance_id ?? null,
      });
      this.#emit(result.status === 'placed' ? 'placed' : 'failed', r);
    } catch (err) {
      this.#settle(held, 'failed', { detail: failureDetail(err) });
      this.#emit('failed', r);
    }
    return this.view(r);
  }

  /** Rejects a pending request as `by` (chained with the note); the held place is refused. */
  async reject(id: string, by: string, note?: string): Promise<ApprovalView> {
    await this.queue.reject(checkId(id), by, note);
    const r = await this.queue.get(id);
    this.#follow(r, false);
    this.#emit('rejected', r);
    return this.view(r);
  }

  /** The operator's view of a request and the place it holds. */
  view(r: ApprovalRequest): ApprovalView {
    const h = this.held.get(r.id);
    return {
      approval_id: r.id,
      state: r.state,
      action: r.action,
      agent: r.agent,
      rule: r.rule,
      reason: r.reason,
      created_at_ms: r.created_at,
      expires_at_ms: r.expires_at,
      decided_at_ms: r.decided_at ?? null,
      decided_by: r.decided_by ?? null,
      note: r.note ?? null,
      outcome: r.outcome === undefined ? null : { ...r.outcome },
      defer_event: r.defer_event ?? null,
      resolution_event: r.resolution_event ?? null,
      place:
        h === undefined
          ? null
          : {
              workload: h.workload,
              version: h.version,
              manifest_hash: h.manifest_hash,
              node_id: h.node_id,
              variant: h.variant,
              status: h.status,
              order_id: h.order_id,
              instance_id: h.instance_id,
              detail: h.detail,
            },
    };
  }

  /** A rejected or expired request's held place follows it (refused, expired); told when `tell`. */
  #follow(r: ApprovalRequest, tell = true): void {
    if (r.state !== 'rejected' && r.state !== 'expired') return;
    const held = this.held.get(r.id);
    if (held === undefined || held.status !== 'held') return;
    if (r.state === 'rejected') {
      this.#settle(held, 'refused', {
        detail: `rejected by ${r.decided_by ?? 'unknown'}${r.note ? `: ${r.note}` : ''}`,
      });
    } else {
      this.#settle(held, 'expired', { detail: `approval ${r.id} expired without a decision` });
      if (tell) this.#emit('expired', r);
    }
  }

  #settle(
    held: HeldPlaceRecord,
    status: HeldPlaceStatus,
    more: { detail?: string; order_id?: string | null; instance_id?: string | null },
  ): void {
    this.held.put({ ...held, status, ...more });
  }

  #emit(kind: ApprovalEventKind, r: ApprovalRequest): void {
    if (this.#listeners.size === 0) return;
    const event = { kind, approval: this.view(r) };
    for (const l of [...this.#listeners]) {
      try {
        l(event);
      } catch {
        // A listener must not throw; one that does is not allowed to break the approval.
      }
    }
  }
}

/** Why an approved place failed, for people: the message and each node's reason. */
function failureDetail(err: unknown): string {
  const reasons = err instanceof PlaneError ? Object.entries(err.reasons) : [];
  const each = reasons.map(([node, why]) => `${node}: ${why}`).join('; ');
  return `${errorMessage(err)}${each === '' ? '' : ` (${each})`}`.slice(0, 2048);
}

/** Refuses an id that cannot be an approval request's (`approval_not_found`, naming `id`). */
function checkId(id: string): string {
  if (!/^[0-9a-f]{8,64}$/.test(id)) {
    throw new PlaneError('approval_not_found', `no approval request ${JSON.stringify(id.slice(0, 80))}`, {
      field: 'id',
    });
  }
  return id;
}
