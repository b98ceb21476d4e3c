import { z } from 'zod';
import { type GateContext, GateContextSchema, referenceString } from './context.js';
import { ACTIONS, type Action } from './levels.js';

/** The life of an approval request: pending until an operator decides or it expires. */
export type ApprovalState = 'pending' | 'approved' | 'rejected' | 'expired';

/** A deferred action waiting for (or settled by) an operator. */
export interface ApprovalRequest {
  /** Random id (hex). */
  readonly id: string;
  /** The agent that asked. */
  readonly agent: string;
  /** The deferred action. */
  readonly action: Action;
  /** The context it was decided on. */
  readonly context: GateContext;
  /** Whether it was a teardown check. */
  readonly teardown: boolean;
  /** The defer rule. */
  readonly rule: string;
  /** The defer reason. */
  readonly reason: string;
  /** When it was queued (ms since the epoch). */
  readonly created_at: number;
  /** When it expires unless decided (ms since the epoch). */
  readonly expires_at: number;
  /** Its state. */
  readonly state: ApprovalState;
  /** When it was decided or expired. */
  readonly decided_at?: number;
  /** The operator who approved or rejected it. */
  readonly decided_by?: string;
  /** The operator's note. */
  readonly note?: string;
  /** Chain hash of the defer decision. */
  readonly defer_event?: string;
  /** Chain hash of the approval, rejection or expiry. */
  readonly resolution_event?: string;
  /**
   * What an approval came to when it was re-decided against the policy and revocations in force when
   * the operator approved (present on approved requests): a permit, or a deny naming why.
   */
  readonly outcome?: ApprovalOutcome;
}

/** The re-decision of an approved request (see `ApprovalRequest.outcome`). */
export interface ApprovalOutcome {
  readonly verdict: 'permit' | 'deny';
  /** The deciding rule. */
  readonly rule: string;
  /** Why, for people. */
  readonly reason: string;
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

const time = z.number().int('must be an integer').min(0, 'must be at least 0');
const hash = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');

/** Schema of a stored approval request. */
export const ApprovalRequestSchema: z.ZodType<ApprovalRequest> = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{8,64}$/, 'expected 8..64 lower-case hex characters'),
  agent: z.string().min(1, 'must not be empty').max(256, 'longer than 256 characters'),
  action: z.enum(ACTIONS),
  context: GateContextSchema,
  teardown: z.boolean(),
  rule: referenceString,
  reason: z.string().max(4096, 'longer than 4096 characters'),
  created_at: time,
  expires_at: time,
  state: z.enum(['pending', 'approved', 'rejected', 'expired']),
  decided_at: time.exactOptional(),
  decided_by: z.string().min(1, 'must not be empty').max(256, 'longer than 256 characters').exactOptional(),
  note: z.string().max(2048, 'longer than 2048 characters').exactOptional(),
  defer_event: hash.exactOptional(),
  resolution_event: hash.exactOptional(),
  outcome: z
    .strictObject({
      verdict: z.enum(['permit', 'deny']),
      rule: referenceString,
      reason: z.string().max(8192, 'longer than 8192 characters'),
    })
    .exactOptional(),
});

/**
 * Where approval requests are kept. Implementations must make `put` durable before resolving; the
 * queue serialises its own calls, so a store need not be safe for concurrent writers in one process.
 */
export interface ApprovalStore {
  /** The request with this id, if any. */
  get(id: string): Promise<ApprovalRequest | undefined>;
  /** Inserts or replaces a request (by id). */
  put(request: ApprovalRequest): Promise<void>;
  /** Every request, oldest first. */
  list(): Promise<ApprovalRequest[]>;
  /** Removes requests by id (pruning settled ones). */
  remove(ids: readonly string[]): Promise<void>;
}

/** An approval store in memory (lost on restart). */
export class MemoryApprovalStore implements ApprovalStore {
  private readonly requests = new Map<string, ApprovalRequest>();

  /** See {@link ApprovalStore.get}. */
  async get(id: string): Promise<ApprovalRequest | undefined> {
    return this.requests.get(id);
  }

  /** See {@link ApprovalStore.put}. */
  async put(request: ApprovalRequest): Promise<void> {
    this.requests.set(request.id, request);
  }

  /** See {@link ApprovalStore.list}. */
  async list(): Promise<ApprovalRequest[]> {
    return [...this.requests.values()].sort(byAge);
  }

  /** See {@link ApprovalStore.remove}. */
  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.requests.delete(id);
  }
}

/** Orders requests oldest first, then by id (deterministic). */
export function byAge(a: ApprovalRequest, b: ApprovalRequest): number {
  return a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
