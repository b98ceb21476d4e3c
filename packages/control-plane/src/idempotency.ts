import { randomBytes } from 'node:crypto';
import { blake3Hex, canonicalJson, type JsonValue } from '@heddle/envelope';
import type { PlaneConfig } from './config.js';
import { PlaneError } from './errors.js';
import { newOrderId, type PlaceOrderInput } from './order.js';
import type { PlaceResult } from './place.js';
import type { PlaneContext } from './plane-context.js';
import type { IdempotencyRecord } from './state-store.js';

// Idempotency keys of places (issue 15 item 11). A client that lost the answer of a place (a reset
// connection, a timeout, its own crash) sends it again with the same key: the controller answers with
// the order the key made (placed, or unsettled while its node's answer is not known) and never makes
// a second order. Keys are persisted in the state store with the order they made.

/** How long a key is remembered: 24 hours from its first use. */
export const IDEMPOTENCY_KEY_TTL_MS: number = 24 * 60 * 60 * 1000;

/** What a key may be: 1..128 characters of `A-Z a-z 0-9 . _ : -`. */
export const IDEMPOTENCY_KEY_PATTERN: RegExp = /^[A-Za-z0-9._:-]{1,128}$/;

/** The fingerprint of an order: BLAKE3 of its canonical JSON, the key itself left out. */
export function orderFingerprint(order: PlaceOrderInput): string {
  const { idempotency_key: _key, ...rest } = order;
  // cast: an order input is JSON (parsed by PlaceOrderInputSchema)
  return blake3Hex(new TextEncoder().encode(canonicalJson(rest as unknown as JsonValue)));
}

/**
 * How long a claim on a key by another controller (or an earlier life of this one) is taken as a place
 * still running there: a place's timeout, plus its request's lifetime and the allowed clock skew.
 * A retry within it is refused `idempotency_in_progress`; after it, a key whose order left nothing is
 * placed afresh.
 */
export function idempotencyClaimHoldMs(config: PlaneConfig): number {
  return config.placeTimeoutMs + config.requestTtlMs + config.clockSkewMs;
}

/** This plane's claim token, `<controller id>/<random>`: one per process life of a plane. */
const claimTokens = new WeakMap<PlaneContext, string>();
function claimToken(ctx: PlaneContext): string {
  let t = claimTokens.get(ctx);
  if (t === undefined) {
    t = `${ctx.nodeId}/${randomBytes(8).toString('hex')}`;
    claimTokens.set(ctx, t);
  }
  return t;
}

/** When each plane started (its clock), as noted by {@link notePlaneStart}. */
const planeStarts = new WeakMap<PlaneContext, number>();

/**
 * Notes that the plane of `ctx` starts now: a key claimed under this controller's id before that,
 * with a claim that is not this plane's, was claimed by an earlier life of this controller (one
 * process runs a controller's home at a time), which has ended.
 */
export function notePlaneStart(ctx: PlaneContext): void {
  planeStarts.set(ctx, ctx.now());
}

/** True when `held` was claimed by an earlier life of this controller (see {@link notePlaneStart}). */
function earlierLife(ctx: PlaneContext, held: IdempotencyRecord): boolean {
  const started = planeStarts.get(ctx);
  return (
    started !== undefined &&
    held.claimed_by?.split('/')[0] === ctx.nodeId &&
    held.claimed_at_ms !== null &&
    held.claimed_at_ms < started
  );
}

/** What the claim transaction found. */
type Claim =
  | { readonly kind: 'claimed'; readonly record: IdempotencyRecord }
  | { readonly kind: 'held'; readonly held: IdempotencyRecord };

/**
 * Runs a place under its idempotency key (none, or a dry run: `run` as is). The key is claimed in one
 * store transaction (SERIALIZABLE on PostgreSQL: of two controllers racing on a key, one wins) before
 * anything is sent to a node, as pending with this controller's claim token and a new order id.
 * A key seen before with another order is refused with `idempotency_conflict`. A key another
 * controller (or an earlier life of this one) claimed and is still placing (no answer recorded, within
 * {@link idempotencyClaimHoldMs}) is refused with `idempotency_in_progress` (retry later), unless its
 * order already made a placement, which is answered. Otherwise a key seen before with the same order
 * answers with what that order became (`replayed: true`): the answer it gave, or the place still
 * running in this process, or its placement, or `unsettled`. A place that ends refused, having left
 * nothing anywhere, forgets its key so that a retry tries afresh.
 */
export async function withIdempotencyKey(
  ctx: PlaneContext,
  order: PlaceOrderInput,
  run: (orderId: string | undefined) => Promise<PlaceResult>,
): Promise<PlaceResult> {
  const key = order.idempotency_key;
  if (key === undefined || order.dry_run === true) return run(undefined);
  const fingerprint = orderFingerprint(order);
  const now = ctx.now();
  const token = claimToken(ctx);
  ctx.store.pruneIdempotencyKeys(now - IDEMPOTENCY_KEY_TTL_MS);
  const fresh = (held: IdempotencyRecord | undefined): IdempotencyRecord => ({
    key,
    fingerprint,
    order_id: held?.order_id ?? newOrderId(),
    result: null,
    created_at_ms: held?.created_at_ms ?? now,
    claimed_by: token,
    claimed_at_ms: now,
  });
  const first = ctx.store.transaction((): Claim => {
    const held = ctx.store.getIdempotencyKey(key);
    if (held !== undefined) return { kind: 'held', held };
    const record = fresh(undefined);
    ctx.store.putIdempotencyKey(record);
    return { kind: 'claimed', record };
  });
  let claimed: IdempotencyRecord;
  if (first.kind === 'claimed') claimed = first.record;
  else {
    const held = first.held;
    if (held.fingerprint !== fingerprint) {
      throw new PlaneError(
        'idempotency_conflict',
        `idempotency_key ${key} was used for another order (${held.order_id}); use a new key for a new order`,
        { field: 'idempotency_key' },
      );
    }
    const running = ctx.idempotent.get(key);
    if (running !== undefined) return { ...(await running), replayed: true };
    if (claimedElsewhere(ctx, held, token, now)) {
      const placed = ctx.store.listPlacements().some((p) => p.order_id === held.order_id);
      if (!placed) throw inProgress(ctx, held, now);
    }
    const replay = replayOf(ctx, held);
    if (replay !== undefined) return replay;
    // Nothing came of it (a controller that died before sending it anywhere): placed afresh, if the
    // key is still as read (another controller may have taken it meanwhile).
    const retaken = ctx.store.transaction((): IdempotencyRecord | undefined => {
      const again = ctx.store.getIdempotencyKey(key);
      if (again !== undefined && !sameClaim(again, held)) return undefined;
      const record = fresh(held);
      ctx.store.putIdempotencyKey(record);
      return record;
    });
    if (retaken === undefined) throw inProgress(ctx, ctx.store.getIdempotencyKey(key) ?? held, now);
    claimed = retaken;
  }
  const orderId = claimed.order_id;
  const placing = run(orderId).then(
    (result) => {
      ctx.store.putIdempotencyKey({ ...claimed, result: JSON.stringify(result) });
      return result;
    },
    (err: unknown) => {
      if (leftNothing(ctx, orderId)) {
        ctx.store.transaction(() => {
          // Only our own claim: another controller may have taken the key once ours had lapsed.
          if (ctx.store.getIdempotencyKey(key)?.claimed_by === token) ctx.store.removeIdempotencyKey(key);
        });
      }
      throw err;
    },
  );
  ctx.idempotent.set(key, placing);
  try {
    return await placing;
  } finally {
    ctx.idempotent.delete(key);
  }
}

/**
 * True when `held` is a place still running under another claim than `token` (not lapsed). A claim of
 * an earlier life of this controller is not: that life has ended, and what it left is answered as is.
 */
function claimedElsewhere(ctx: PlaneContext, held: IdempotencyRecord, token: string, now: number): boolean {
  return (
    held.result === null &&
    held.claimed_by !== null &&
    held.claimed_by !== token &&
    !earlierLife(ctx, held) &&
    held.claimed_at_ms !== null &&
    now - held.claimed_at_ms < idempotencyClaimHoldMs(ctx.config)
  );
}

/** True when `a` is the same claim as `b` (nobody wrote the key in between). */
function sameClaim(a: IdempotencyRecord, b: IdempotencyRecord): boolean {
  return a.claimed_by === b.claimed_by && a.claimed_at_ms === b.claimed_at_ms && a.result === b.result;
}

/** The `idempotency_in_progress` refusal of a key another controller is placing. */
function inProgress(ctx: PlaneContext, held: IdempotencyRecord, now: number): PlaneError {
  const by = held.claimed_by?.split('/')[0] ?? 'another controller';
  const until = (held.claimed_at_ms ?? now) + idempotencyClaimHoldMs(ctx.config);
  return new PlaneError(
    'idempotency_in_progress',
    `idempotency_key ${held.key} is being placed by controller ${by} (order ${held.order_id}); retry later for its answer (its claim lapses by ${new Date(until).toISOString()})`,
    { field: 'idempotency_key' },
  );
}

/** True when order `orderId` left no placement and no unsettled decision. */
function leftNothing(ctx: PlaneContext, orderId: string): boolean {
  return (
    !ctx.store.listUnsettled().some((u) => u.order_id === orderId) &&
    !ctx.store.listPlacements().some((p) => p.order_id === orderId)
  );
}

/** What the key's order became, as a replayed answer, or undefined when nothing came of it. */
function replayOf(ctx: PlaneContext, held: IdempotencyRecord): PlaceResult | undefined {
  const placements = ctx.store.listPlacements().filter((p) => p.order_id === held.order_id);
  const latest = placements.at(-1);
  const unsettled = ctx.store.listUnsettled().find((u) => u.order_id === held.order_id);
  if (held.result !== null) {
    // cast: written by this store from a PlaceResult (JSON.stringify of one)
    const r = JSON.parse(held.result) as PlaceResult;
    if (r.status === 'placed') {
      const id = r.instance?.instance_id;
      return {
        ...r,
        instance: (id === undefined ? undefined : ctx.store.getPlacement(id)) ?? r.instance,
        replayed: true,
      };
    }
    // It answered awaiting approval: the held place, until the approved place made something.
    if (r.status === 'awaiting_approval' && latest === undefined && unsettled === undefined)
      return { ...r, replayed: true };
    // It answered unsettled (or awaiting approval): what settling (or the approval) made since.
    if (latest !== undefined)
      return { ...r, status: 'placed', decision_id: latest.decision_id, instance: latest, replayed: true };
    if (unsettled !== undefined) return { ...r, replayed: true };
    return undefined; // settled as "nothing happened there"
  }
  if (latest === undefined && unsettled === undefined) return undefined;
  const workload = latest?.workload ?? ctx.store.getOrder(held.order_id)?.workload ?? '';
  const summary =
    latest !== undefined
      ? `${workload}: placed on ${latest.node_id} (replayed from idempotency key ${held.key})`
      : `${workload}: the answer of ${unsettled?.node_id} was lost and is not settled yet (replayed from idempotency key ${held.key})`;
  return {
    status: latest !== undefined ? 'placed' : 'unsettled',
    order_id: held.order_id,
    decision_id: latest?.decision_id ?? unsettled?.decision_id ?? null,
    instance: latest ?? null,
    attempts: [],
    explanation: {
      workload,
      outcome: 'placed',
      ...(latest === undefined ? {} : { node_id: latest.node_id }),
      summary,
      nodes_evaluated: 0,
      nodes_total: 0,
      sampled: false,
      rows: [],
    },
    replayed: true,
  };
}
