import { createHash } from 'node:crypto';
import { ALERT_KIND } from './alerts.js';
import { type ClockReading, describeOffset } from './node-book.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { AlertRecord } from './state-store.js';

// Clock skew alerts (docs/operator-guide.md, "Clock skew"). Each describe of a host measures its clock
// offset (NodeBook: the host's signed `clock_ms`, or the host clock named by a time-window refusal,
// against the midpoint of the round trip on this controller's clock, to within half the round trip).
// An offset beyond `clockSkewWarnMs` (default 10 s, a third of the protocol's 30 s window) opens one
// `clock_skew` alert for the node; it closes (acknowledged by the controller) once the offset is back
// under half of it. When every recently measured host (two or more) is off the same way, the detail
// says that the controller's own clock is the likely culprit.

/** Readings older than this are not compared across hosts (ms). */
const FRESH_MS = 5 * 60_000;

/** What {@link observeClock} did for one node. */
export type ClockAlertChange = 'opened' | 'closed' | 'none';

/** The id of a node's clock alert raised at `raisedAtMs`: one per episode. */
export function clockAlertId(nodeId: string, raisedAtMs: number): string {
  const h = createHash('sha256').update(`${nodeId}\nclock_skew\n${raisedAtMs}`).digest('hex');
  return `al-${h.slice(0, 16)}`;
}

/** The open (not acknowledged) clock alert of `nodeId`, if any. */
export function openClockAlert(ctx: PlaneContext, nodeId: string): AlertRecord | undefined {
  return ctx.store
    .listAlerts()
    .find((a) => a.reason === 'clock_skew' && a.node_id === nodeId && a.acked_at_ms === null);
}

/**
 * When the offset of `reading` likely comes from this controller's clock, the other hosts that agree:
 * two or more hosts measured in the last five minutes, every one beyond `warnMs` the same way.
 */
function controllerSuspect(
  ctx: PlaneContext,
  warnMs: number,
): { hosts: number; offsetMs: number } | undefined {
  const now = ctx.now();
  const fresh = [...ctx.book.clocks().values()].filter((r) => now - r.measured_at_ms <= FRESH_MS);
  if (fresh.length < 2) return undefined;
  const ahead = fresh.every((r) => r.offset_ms - r.error_ms > warnMs);
  const behind = fresh.every((r) => r.offset_ms + r.error_ms < -warnMs);
  if (!ahead && !behind) return undefined;
  const sorted = fresh.map((r) => r.offset_ms).sort((a, b) => a - b);
  // cast: fresh has two or more readings, so the middle one exists
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  return { hosts: fresh.length, offsetMs: -median };
}

/** The alert's detail: the host, its offset and how it was measured, and what to do. */
export function clockAlertDetail(ctx: PlaneContext, nodeId: string, r: ClockReading): string {
  const url = ctx.store.getTarget(nodeId)?.url ?? '?';
  const window = ctx.config.clockSkewMs / 1000;
  const state = r.refused
    ? `it refuses this controller's signed requests (expired: outside the ${window} s window)`
    : Math.abs(r.offset_ms) > ctx.config.clockSkewMs
      ? `past the ${window} s window signed requests and facts allow`
      : `the warning threshold is ${ctx.config.clockSkewWarnMs / 1000} s, the hard window ${window} s`;
  const suspect = controllerSuspect(ctx, ctx.config.clockSkewWarnMs);
  const culprit =
    suspect === undefined
      ? "fix the host's time (NTP: timedatectl, chronyc tracking)"
      : `every one of the ${suspect.hosts} hosts measured is off the same way: this controller's own clock is probably ${(Math.abs(suspect.offsetMs) / 1000).toFixed(1)} s ${suspect.offsetMs >= 0 ? 'ahead' : 'behind'}; fix the controller's time (NTP) first`;
  return `node ${nodeId} (${url}): clock ${describeOffset(r)}, offset_ms=${r.offset_ms}; ${state}; ${culprit}`;
}

/**
 * Opens or closes the `clock_skew` alert of `nodeId` from its latest clock reading: opened (stored,
 * chained `workload.alert` phase `raised`, event `alert.opened`) when the offset less its error bound
 * exceeds `clockSkewWarnMs` and none is open; closed (acknowledged by the controller, chained phase
 * `closed`, event `alert.closed`) when the offset plus its error is back within half of it. A node
 * with no reading (never measured, or an older host without `clock_ms`) changes nothing.
 */
export async function observeClock(ctx: PlaneContext, nodeId: string): Promise<ClockAlertChange> {
  const r = ctx.book.clockOf(nodeId);
  if (r === undefined) return 'none';
  const warn = ctx.config.clockSkewWarnMs;
  const open = openClockAlert(ctx, nodeId);
  if (open === undefined && Math.abs(r.offset_ms) - r.error_ms > warn) {
    if (ctx.book.clockAlerted(nodeId)) return 'none';
    const now = ctx.now();
    const alert: AlertRecord = {
      alert_id: clockAlertId(nodeId, now),
      instance_id: '',
      node_id: nodeId,
      order_id: '',
      reason: 'clock_skew',
      detail: clockAlertDetail(ctx, nodeId, r).slice(0, 1024),
      raised_at_ms: now,
      acked_at_ms: null,
    };
    ctx.store.putAlert(alert);
    ctx.book.setClockAlerted(nodeId, true);
    await ctx.chain.append(PLANE_CHAIN_SOURCE, ALERT_KIND, {
      phase: 'raised',
      controller: ctx.nodeId,
      alert_id: alert.alert_id,
      instance_id: '',
      node_id: nodeId,
      order_id: '',
      reason: 'clock_skew',
      detail: alert.detail,
      offset_ms: r.offset_ms,
      error_ms: r.error_ms,
    });
    return 'opened';
  }
  if (Math.abs(r.offset_ms) + r.error_ms <= warn / 2) {
    ctx.book.setClockAlerted(nodeId, false);
    if (open === undefined) return 'none';
    const closed: AlertRecord = { ...open, acked_at_ms: ctx.now() };
    ctx.store.putAlert(closed);
    await ctx.chain.append(PLANE_CHAIN_SOURCE, ALERT_KIND, {
      phase: 'closed',
      controller: ctx.nodeId,
      alert_id: open.alert_id,
      instance_id: '',
      node_id: nodeId,
      reason: 'clock_skew',
      offset_ms: r.offset_ms,
      error_ms: r.error_ms,
    });
    return 'closed';
  }
  return 'none';
}
