import type { RevocationList } from '@heddle/package';
import { chainAlert, stageAlert } from './alerts.js';
import { PlaneError } from './errors.js';
import { placeStoredOrder } from './place.js';
import { chainChange, type StagedChange, stageState } from './placement-life.js';
import type { PlaneContext } from './plane-context.js';
import type { AlertRecord, OrderRecord, PlacementRecord, RescheduleRecord } from './state-store.js';

// Node death and rescheduling (docs/lifecycle.md): a lost instance meant to run is placed again elsewhere
// through the normal place path, with backoff while no node takes it, at most `maxReschedules` times
// per lineage; pinned and non-migratable workloads raise an alert instead.

/** What the reschedule steps of one tick did (merged into the tick report). */
export interface RescheduleOutcome {
  /** Instances moved to `lost`. */
  readonly lost: string[];
  /** Replacements placed: the lost instance, its replacement and where. */
  readonly rescheduled: { instance_id: string; replaced_by: string; node_id: string }[];
  /** Reschedules that found no node this time, with when they are tried again. */
  readonly waiting: { instance_id: string; next_at_ms: number; reason: string }[];
  /** Alerts raised (each once). */
  readonly alerts: AlertRecord[];
  /** Placements marked revoked (a revocation names them). */
  readonly revoked: string[];
}

/** An empty {@link RescheduleOutcome}. */
export function emptyOutcome(): RescheduleOutcome {
  return { lost: [], rescheduled: [], waiting: [], alerts: [], revoked: [] };
}

/** The wait before attempt `attempts + 1` of a reschedule (or an orphan unload): 10 s doubling to 5 min. */
export function backoffMs(ctx: Pick<PlaneContext, 'config'>, attempts: number): number {
  const { rescheduleBackoffMs: base, rescheduleBackoffMaxMs: max } = ctx.config;
  return Math.min(max, base * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
}

/**
 * Why `order` cannot be moved to another node, or undefined: a Seed store pin (it runs on its Seed's
 * store), or an order placed with `migratable: false` (the operator says it needs a sensor or device of
 * its node). Cog packages declare no such requirement themselves, so the operator's word decides.
 */
export function notMigratable(order: OrderRecord): string | undefined {
  if (order.store_pin !== undefined && order.store_pin !== null)
    return `a Seed store cog (${order.store_pin.id}@${order.store_pin.version}) runs only on its Seed`;
  if (!order.migratable)
    return 'the order is not migratable (placed with migratable false: it needs a sensor or device of its node)';
  return undefined;
}

/** The first revoked reference of `p` by `list`, as a reason, or undefined. */
export function revokedBy(list: RevocationList | undefined, p: PlacementRecord): string | undefined {
  if (list === undefined) return undefined;
  const hit = list.firstRevoked({
    packageId: p.package_id,
    signerKeys: p.signer_keys,
    artifactHashes: p.artifact_hashes,
  });
  return hit === undefined ? undefined : `revoked: ${hit.kind} ${hit.ref}`;
}

/**
 * Moves `p` to `lost` (chained with `reason`) and, when it was meant to run, plans its replacement
 * (a reschedule row, due now) or raises the alert that says why it cannot be moved. `deadNode`: its
 * node is dead and is avoided. The move and the plan are written in one transaction (then chained):
 * a controller killed in between never leaves a lost instance that nothing will replace or report.
 */
export async function loseInstance(
  ctx: PlaneContext,
  p: PlacementRecord,
  reason: string,
  deadNode: boolean,
  revocations: RevocationList | undefined,
  out: RescheduleOutcome,
): Promise<void> {
  const [lost, plan] = ctx.store.transaction(() => {
    const before = ctx.store.getPlacement(p.instance_id)?.state ?? p.state;
    const change = stageState(ctx, p.instance_id, 'lost', reason);
    const meant = change.placement.desired_running && before !== 'finished' && before !== 'failed';
    const next: Plan = meant
      ? stagePlan(ctx, change.placement, deadNode ? [p.node_id] : [], revocations)
      : { kind: 'none' };
    return [change, next] as const;
  });
  await chainChange(ctx, lost);
  out.lost.push(p.instance_id);
  await chainPlan(ctx, p.instance_id, plan, out);
}

/** What was planned for a lost instance (written; chained by {@link chainPlan}). */
type Plan =
  | { readonly kind: 'none' }
  | { readonly kind: 'row' }
  | { readonly kind: 'revoked'; readonly change: StagedChange }
  | { readonly kind: 'alert'; readonly alert: AlertRecord; readonly raised: boolean };

/** Plans the replacement of the lost `p`, or raises the alert saying why it is not moved. */
export async function planReschedule(
  ctx: PlaneContext,
  p: PlacementRecord,
  avoid: readonly string[],
  revocations: RevocationList | undefined,
  out: RescheduleOutcome,
): Promise<void> {
  const plan = ctx.store.transaction(() => stagePlan(ctx, p, avoid, revocations));
  await chainPlan(ctx, p.instance_id, plan, out);
}

/** The store half of {@link planReschedule} (synchronous: it joins the caller's transaction). */
function stagePlan(
  ctx: PlaneContext,
  p: PlacementRecord,
  avoid: readonly string[],
  revocations: RevocationList | undefined,
): Plan {
  const alert = (reason: AlertRecord['reason'], detail: string): Plan => ({
    kind: 'alert',
    ...stageAlert(ctx, p, reason, detail),
  });
  const revoked = revokedBy(revocations, p);
  if (revoked !== undefined)
    return { kind: 'revoked', change: stageState(ctx, p.instance_id, 'revoked', revoked) };
  // A job's instance is its reconciler's to replace (docs/jobs.md), never the rescheduler's.
  if (ctx.store.getJobInstance(p.instance_id) !== undefined) return { kind: 'none' };
  const order = ctx.store.getOrder(p.order_id);
  if (order === undefined)
    return alert('no_order', `order ${p.order_id} is no longer held: ${p.workload} cannot be placed again`);
  if (order.node !== null)
    return alert('pinned', `${p.workload} is pinned to node ${order.node}, which lost it: it is not moved`);
  const why = notMigratable(order);
  if (why !== undefined) return alert('not_migratable', `${p.workload} is not moved: ${why}`);
  const count = (p.reschedules ?? 0) + 1;
  if (count > ctx.config.maxReschedules) {
    return alert(
      'reschedule_limit',
      `${p.workload} was rescheduled ${p.reschedules ?? 0} times (at most ${ctx.config.maxReschedules}): it is not moved again`,
    );
  }
  const held = ctx.store.getReschedule(p.instance_id);
  const now = ctx.now();
  ctx.store.putReschedule(
    held === undefined
      ? {
          instance_id: p.instance_id,
          order_id: p.order_id,
          node_id: p.node_id,
          avoid: [...avoid],
          reschedules: count,
          attempts: 0,
          next_at_ms: now,
          since_ms: now,
          decision_id: null,
          last_error: null,
        }
      : { ...held, avoid: [...new Set([...held.avoid, ...avoid])] },
  );
  return { kind: 'row' };
}

/** Chains what {@link stagePlan} wrote and reports it in `out`. */
async function chainPlan(
  ctx: PlaneContext,
  instanceId: string,
  plan: Plan,
  out: RescheduleOutcome,
): Promise<void> {
  if (plan.kind === 'revoked') {
    await chainChange(ctx, plan.change);
    out.revoked.push(instanceId);
  } else if (plan.kind === 'alert' && plan.raised) {
    await chainAlert(ctx, plan.alert);
    out.alerts.push(plan.alert);
  }
}

/**
 * Runs the reschedules that are due, one after the other: each re-places the stored order through
 * the normal place path (dead nodes avoided, the reschedule timeout); a replacement placed makes the
 * lost instance `rescheduled`; one that found no node waits (backoff); one whose answer was lost
 * waits for settling (its decision is kept on the row and finished on a later tick). Rows in `hold`
 * (instances that may still run on their node, which answers again) wait for a later tick.
 */
export async function runReschedules(
  ctx: PlaneContext,
  dead: ReadonlySet<string>,
  revocations: RevocationList | undefined,
  out: RescheduleOutcome,
  hold: ReadonlySet<string> = new Set(),
): Promise<void> {
  for (const row of ctx.store.listReschedules()) {
    const p = ctx.store.getPlacement(row.instance_id);
    if (p === undefined || p.state !== 'lost') {
      ctx.store.removeReschedule(row.instance_id); // adopted back, revoked or unloaded meanwhile
      continue;
    }
    if (row.decision_id !== null) {
      await awaitUnsettled(ctx, row, out);
      continue;
    }
    if (row.next_at_ms > ctx.now()) continue;
    // Its node answers again and may still run it (listed, or its listing unread): wait.
    if (hold.has(row.instance_id)) continue;
    // At most once (docs/lifecycle.md): while its node cannot be asked, never before that node's
    // controller lease has surely expired and its copy stopped.
    const leaseAt =
      ctx.store.getTarget(row.node_id)?.unreachable_since_ms == null
        ? undefined
        : ctx.book.leaseExpiredAtMs(row.node_id);
    if (leaseAt !== undefined && leaseAt > ctx.now()) {
      out.waiting.push({
        instance_id: row.instance_id,
        next_at_ms: leaseAt,
        reason: `waiting for the controller lease of node ${row.node_id} to expire (its copy stops then)`,
      });
      continue;
    }
    const order = ctx.store.getOrder(row.order_id);
    if (revokedBy(revocations, p) !== undefined || order === undefined) {
      // The row goes with what replaces it (the move to revoked, or the alert), in one transaction.
      const plan = ctx.store.transaction(() => {
        ctx.store.removeReschedule(row.instance_id);
        return stagePlan(ctx, p, row.avoid, revocations);
      });
      await chainPlan(ctx, p.instance_id, plan, out);
      continue;
    }
    try {
      const r = await placeStoredOrder(ctx, order, {
        replaces: p.instance_id,
        reschedules: row.reschedules,
        avoid: [...new Set([...row.avoid, ...dead])],
        timeoutMs: ctx.config.rescheduleTimeoutMs,
        // The decision is on the row before a place is sent: a restart settles it, never re-decides.
        onDecision: (decisionId) => ctx.store.putReschedule({ ...row, decision_id: decisionId }),
      });
      if (r.status === 'placed' && r.instance !== null) {
        await finish(ctx, row, r.instance, out);
      } else {
        ctx.store.putReschedule({
          ...row,
          decision_id: r.decision_id,
          last_error: 'the place answer was lost',
        });
      }
    } catch (err) {
      if (!(err instanceof PlaneError)) throw err;
      const attempts = row.attempts + 1;
      const next = ctx.now() + backoffMs(ctx, attempts);
      const reason = err.message.slice(0, 512);
      ctx.store.putReschedule({ ...row, attempts, next_at_ms: next, last_error: reason });
      out.waiting.push({ instance_id: row.instance_id, next_at_ms: next, reason });
    }
  }
}

/** A reschedule whose place was left unsettled: finished once settling recorded (or dropped) it. */
async function awaitUnsettled(
  ctx: PlaneContext,
  row: RescheduleRecord,
  out: RescheduleOutcome,
): Promise<void> {
  const placed = ctx.store.listPlacements().find((x) => x.decision_id === row.decision_id);
  if (placed !== undefined) {
    await finish(ctx, row, placed, out);
    return;
  }
  if (row.decision_id !== null && ctx.store.getUnsettled(row.decision_id) !== undefined) return;
  // Settled as "nothing happened": try again after the backoff.
  const attempts = row.attempts + 1;
  const next = ctx.now() + backoffMs(ctx, attempts);
  ctx.store.putReschedule({
    ...row,
    decision_id: null,
    attempts,
    next_at_ms: next,
    last_error: 'the node did not act on the place',
  });
  out.waiting.push({
    instance_id: row.instance_id,
    next_at_ms: next,
    reason: 'the node did not act on the place',
  });
}

/** The replacement `next` is placed: the lost instance becomes `rescheduled`, the row goes. */
async function finish(
  ctx: PlaneContext,
  row: RescheduleRecord,
  next: PlacementRecord,
  out: RescheduleOutcome,
): Promise<void> {
  if (next.instance_id === row.instance_id) {
    // Placed again on its own node under its own id: the lost instance is back, nothing was replaced.
    const back = ctx.store.transaction(() => {
      ctx.store.removeReschedule(row.instance_id);
      const state = ctx.store.getPlacement(next.instance_id)?.state ?? next.state;
      return stageState(ctx, next.instance_id, state, 'lineage', {
        reschedules: row.reschedules,
        desired_running: true,
      });
    });
    await chainChange(ctx, back);
    out.rescheduled.push({
      instance_id: row.instance_id,
      replaced_by: next.instance_id,
      node_id: next.node_id,
    });
    return;
  }
  const [old, lineage] = ctx.store.transaction(() => {
    const o = stageState(
      ctx,
      row.instance_id,
      'rescheduled',
      `replaced by ${next.instance_id} on ${next.node_id}`,
    );
    // A replacement recorded by settling does not know its lineage yet.
    const state = ctx.store.getPlacement(next.instance_id)?.state ?? next.state;
    const l = stageState(ctx, next.instance_id, state, 'lineage', {
      replaces: row.instance_id,
      reschedules: row.reschedules,
      desired_running: true,
    });
    ctx.store.removeReschedule(row.instance_id);
    return [o, l] as const;
  });
  await chainChange(ctx, old, { replaced_by: next.instance_id, replaced_on: next.node_id });
  await chainChange(ctx, lineage);
  out.rescheduled.push({
    instance_id: row.instance_id,
    replaced_by: next.instance_id,
    node_id: next.node_id,
  });
}
