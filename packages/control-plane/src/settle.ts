import { record } from './place-attempt.js';
import { chainChange } from './placement-life.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import { reconcilePlace } from './reconcile.js';
import { settleSeed } from './seed-settle.js';

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
 * Settles unsettled decisions (DESIGN 4): each is reconciled with its node (`status`); a decision that
 * produced an instance is recorded as a placement, one the node never acted on is dropped (chained
 * either way), one whose node still cannot be asked stays, its attempts counted. Run at start and
 * on every tick of the controller daemon.
 */
export async function settleUnsettled(ctx: PlaneContext, timeoutMs = 2_000): Promise<SettleReport> {
  const placed: string[] = [];
  const nothing: string[] = [];
  const pending: string[] = [];
  for (const u of ctx.store.listUnsettled()) {
    if (ctx.inProgress.has(u.decision_id)) continue; // its attempt in this process settles it
    const target = ctx.store.getTarget(u.node_id);
    const order = ctx.store.getOrder(u.order_id);
    if (target === undefined || order === undefined) {
      pending.push(u.decision_id);
      continue;
    }
    if (target.seed !== undefined && target.seed !== null) {
      // A Seed is asked through its own API (its installed list), not the host protocol.
      const r = await settleSeed(ctx, u, target, order);
      (r === 'placed' ? placed : r === 'nothing' ? nothing : pending).push(u.decision_id);
      continue;
    }
    // The request was signed before the decision became unsettled: it expires by since + its lifetime.
    const expiresAtMs = u.since_ms + ctx.config.requestTtlMs + 1_000;
    const s = await reconcilePlace(ctx, target, u.decision_id, expiresAtMs, timeoutMs);
    if (ctx.store.getUnsettled(u.decision_id) === undefined) continue; // settled meanwhile
    if (s.kind === 'unknown') {
      ctx.store.putUnsettled({ ...u, attempts: u.attempts + 1, last_error: s.reason.slice(0, 512) });
      pending.push(u.decision_id);
      continue;
    }
    if (s.kind === 'placed') {
      let verified: Awaited<ReturnType<typeof ctx.packages.get>>;
      try {
        verified = await ctx.packages.get(order.manifest_hash);
      } catch (err) {
        // The node placed it, but the package cannot be read back here: keep it unsettled, say why.
        const why = `placed on ${u.node_id}, but the package ${order.manifest_hash} no longer verifies here: ${(err as Error).message}`;
        ctx.store.putUnsettled({ ...u, attempts: u.attempts + 1, last_error: why.slice(0, 512) });
        pending.push(u.decision_id);
        continue;
      }
      const staged = ctx.store.transaction(() => {
        const change = record(ctx, verified, order, u.decision_id, u.node_id, s.instance);
        ctx.store.removeUnsettled(u.decision_id);
        return change;
      });
      ctx.reservations.settled(u.decision_id);
      await chainChange(ctx, staged, { why: 'settled' });
      placed.push(u.decision_id);
    } else {
      ctx.store.removeUnsettled(u.decision_id);
      ctx.reservations.settled(u.decision_id);
      nothing.push(u.decision_id);
    }
    await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
      phase: 'settled',
      decision_id: u.decision_id,
      node_id: u.node_id,
      outcome: s.kind,
    });
  }
  return { placed, nothing, pending };
}
