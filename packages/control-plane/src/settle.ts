import type { SettleOutcome } from './node-driver.js';
import { type PlacedPackage, placedPackage, placedPackageOfOrder, record } from './place-attempt.js';
import { chainChange } from './placement-life.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import { reconcilePlace } from './reconcile.js';
import type { OrderRecord, TargetRecord, UnsettledRecord } from './state-store.js';

/** What a settling pass did, decision id by decision id. */
export interface SettleReport {
  /** Settled: the node had placed it (now recorded). */
  readonly placed: readonly string[];
  /** Settled: the node never acted on it (the order can be placed again). */
  readonly nothing: readonly string[];
  /** Still unsettled (the node could not be asked). */
  readonly pending: readonly string[];
}

/**
 * Settles unsettled decisions (docs/lifecycle.md): each is settled with its node by the node's
 * driver (`NodeDriver.settle`: a host is asked its `status`); a decision that produced an instance is
 * recorded as a placement, one the node never acted on is dropped (chained either way), one whose
 * node still cannot be asked stays, its attempts counted (a decision whose node kind has no driver here stays, uncounted). Run at
 * start and on every tick of the controller daemon.
 */
export async function settleUnsettled(ctx: PlaneContext, timeoutMs = 2_000): Promise<SettleReport> {
  const placed: string[] = [];
  const nothing: string[] = [];
  const pending: string[] = [];
  for (const u of ctx.store.listUnsettled()) {
    if (ctx.inProgress.has(u.decision_id)) continue; // its attempt in this process settles it
    const target = ctx.store.getTarget(u.node_id);
    const order = ctx.store.getOrder(u.order_id);
    const driver = target === undefined ? undefined : ctx.drivers.find(target);
    if (target === undefined || order === undefined || driver === undefined) {
      pending.push(u.decision_id);
      continue;
    }
    const r = await driver.settle(ctx, u, target, order, timeoutMs);
    if (r === 'placed') placed.push(u.decision_id);
    else if (r === 'nothing') nothing.push(u.decision_id);
    else if (r === 'pending') pending.push(u.decision_id);
  }
  return { placed, nothing, pending };
}

/**
 * Settles one unsettled decision with a `heddle-host` (the host driver's): reconciled with its
 * `status` (see `reconcilePlace`); the instance it made is recorded, or the decision dropped, or kept
 * with its attempts counted.
 */
export async function settleOnHost(
  ctx: PlaneContext,
  u: UnsettledRecord,
  target: TargetRecord,
  order: OrderRecord,
  timeoutMs: number,
): Promise<SettleOutcome> {
  // The request was signed before the decision became unsettled: it expires by since + its lifetime.
  const expiresAtMs = u.since_ms + ctx.config.requestTtlMs + 1_000;
  const s = await reconcilePlace(ctx, target, u.decision_id, expiresAtMs, timeoutMs);
  if (ctx.store.getUnsettled(u.decision_id) === undefined) return 'gone'; // settled meanwhile
  if (s.kind === 'unknown') {
    ctx.store.putUnsettled({ ...u, attempts: u.attempts + 1, last_error: s.reason.slice(0, 512) });
    return 'pending';
  }
  if (s.kind === 'placed') {
    let verified: PlacedPackage;
    try {
      verified = placedPackage(await ctx.packages.get(order.manifest_hash));
    } catch (err) {
      // Not held here (another controller sharing the state placed it): the order's own package
      // facts, written with it before the place was sent, say what to record.
      const facts = placedPackageOfOrder(order);
      if (facts === undefined) {
        // The node placed it, but the package cannot be read back here: keep it unsettled, say why.
        const why = `placed on ${u.node_id}, but the package ${order.manifest_hash} no longer verifies here: ${err instanceof Error ? err.message : String(err)}`;
        ctx.store.putUnsettled({ ...u, attempts: u.attempts + 1, last_error: why.slice(0, 512) });
        return 'pending';
      }
      verified = facts;
    }
    const staged = ctx.store.transaction(() => {
      const change = record(ctx, verified, order, u.decision_id, u.node_id, s.instance);
      ctx.store.removeUnsettled(u.decision_id);
      return change;
    });
    ctx.reservations.settled(u.decision_id);
    await chainChange(ctx, staged, { why: 'settled' });
  } else {
    ctx.store.removeUnsettled(u.decision_id);
    ctx.reservations.settled(u.decision_id);
  }
  await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
    phase: 'settled',
    decision_id: u.decision_id,
    node_id: u.node_id,
    outcome: s.kind,
  });
  return s.kind;
}
