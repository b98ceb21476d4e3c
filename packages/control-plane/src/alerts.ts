import { createHash } from 'node:crypto';
import { actorField } from './actor.js';
import { PlaneError } from './errors.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { AlertReason, AlertRecord, PlacementRecord } from './state-store.js';

/** The chain kind of an alert (source `workload.placement`). */
export const ALERT_KIND = 'workload.alert';

/** The id of the alert for (`instanceId`, `reason`): `al-` and 16 hex, so each is raised once. */
export function alertId(instanceId: string, reason: AlertReason): string {
  return `al-${createHash('sha256').update(`${instanceId}\n${reason}`).digest('hex').slice(0, 16)}`;
}

/**
 * Raises an alert for `p` (docs/lifecycle.md: a pinned or non-migratable workload lost with its node, a
 * lineage past its reschedule limit): stored and chained (`workload.alert`) once per (instance,
 * reason); raising it again returns the held one and chains nothing. Returns the alert and whether
 * it is new.
 */
export async function raiseAlert(
  ctx: PlaneContext,
  p: Pick<PlacementRecord, 'instance_id' | 'node_id' | 'order_id'>,
  reason: AlertReason,
  detail: string,
): Promise<{ alert: AlertRecord; raised: boolean }> {
  const staged = stageAlert(ctx, p, reason, detail);
  if (staged.raised) await chainAlert(ctx, staged.alert);
  return staged;
}

/**
 * The store half of {@link raiseAlert} (synchronous, so it can join a transaction): the held alert, or
 * a new one written. Chain a new one with {@link chainAlert} once the transaction is done.
 */
export function stageAlert(
  ctx: PlaneContext,
  p: Pick<PlacementRecord, 'instance_id' | 'node_id' | 'order_id'>,
  reason: AlertReason,
  detail: string,
): { alert: AlertRecord; raised: boolean } {
  const id = alertId(p.instance_id, reason);
  const held = ctx.store.getAlert(id);
  if (held !== undefined) return { alert: held, raised: false };
  const alert: AlertRecord = {
    alert_id: id,
    instance_id: p.instance_id,
    node_id: p.node_id,
    order_id: p.order_id,
    reason,
    detail: detail.slice(0, 1024),
    raised_at_ms: ctx.now(),
    acked_at_ms: null,
  };
  ctx.store.putAlert(alert);
  return { alert, raised: true };
}

/** Chains a raised alert (`workload.alert`, phase `raised`). */
export async function chainAlert(ctx: PlaneContext, alert: AlertRecord): Promise<void> {
  await ctx.chain.append(PLANE_CHAIN_SOURCE, ALERT_KIND, {
    phase: 'raised',
    controller: ctx.nodeId,
    alert_id: alert.alert_id,
    instance_id: alert.instance_id,
    node_id: alert.node_id,
    order_id: alert.order_id,
    reason: alert.reason,
    detail: alert.detail,
  });
}

/**
 * Acknowledges an alert (the operator saw it): kept, with `acked_at_ms` set, and chained. An unknown
 * id is `invalid_input` naming `alert`. Acknowledging twice keeps the first time.
 */
export async function ackAlert(ctx: PlaneContext, id: string): Promise<AlertRecord> {
  const held = ctx.store.getAlert(id);
  if (held === undefined) {
    throw new PlaneError('unknown_alert', `no alert ${id} is known to this controller (see alerts)`, {
      field: 'alert',
    });
  }
  if (held.acked_at_ms !== null) return held;
  const acked: AlertRecord = { ...held, acked_at_ms: ctx.now() };
  ctx.store.putAlert(acked);
  await ctx.chain.append(PLANE_CHAIN_SOURCE, ALERT_KIND, {
    ...actorField(),
    phase: 'acknowledged',
    controller: ctx.nodeId,
    alert_id: id,
    instance_id: held.instance_id,
    reason: held.reason,
  });
  return acked;
}
