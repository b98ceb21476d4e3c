// Clock faults on a host daemon that runs under libfaketime (NetCluster `faketime`, see ../faketime.ts):
// `clock-skew` steps one host's wall clock 40 to 60 s behind (past the protocol's 30 s window) for the
// hold; `clock-drift` moves it ahead in steps (4, 8, 12, 16 s: a slow drift, compressed in time)
// across the controller's 10 s warning threshold but inside the window. Each proves it landed from
// the controller's side, through the operator API: a describe inside the window measured the host's
// offset (refused as `expired` for the skew; answered for the drift, while the alert was open) and a
// `clock_skew` alert naming the host was open; and after the lift the offset is back, the host answers
// and its alert is closed.
import type { NodeView } from '@heddle/control-plane';
import { setClock } from '../faketime.js';
import type { NetCluster } from '../net-cluster.js';
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * How long libfaketime may take to read a new offset: its 1 s cache runs out when the whole seconds
 * since the last read exceed 1, so up to 2 s; plus a margin.
 */
const PICKUP_MS = 2_300;

/** How long one step may take to be measured from the controller's side under load. */
const STEP_PROOF_MS = 10_000;

async function nodeOf(c: NetCluster, nodeId: string): Promise<NodeView | undefined> {
  return (await c.api().refreshNodes()).find((n) => n.node_id === nodeId);
}

async function openAlert(c: NetCluster, nodeId: string): Promise<string | undefined> {
  const open = await c.api().alerts({ unacknowledged: true });
  return open.find((a) => a.reason === 'clock_skew' && a.node_id === nodeId)?.alert_id;
}

/** After a lift: waits (up to 15 s) for the host to answer with its offset back under 1 s and its alert closed. */
async function recovered(c: NetCluster, nodeId: string): Promise<{ ok: boolean; what: string }> {
  const until = Date.now() + 15_000;
  let what = 'never measured';
  while (Date.now() < until) {
    const n = await nodeOf(c, nodeId).catch(() => undefined);
    const clk = n?.clock;
    const alert = await openAlert(c, nodeId).catch(() => 'unknown');
    what = `offset ${clk?.offset_ms ?? '?'} ms, refused ${clk?.refused ?? '?'}, last_error ${n?.last_error ?? null}, open alert ${alert ?? 'none'}`;
    if (
      clk !== null &&
      clk !== undefined &&
      !clk.refused &&
      Math.abs(clk.offset_ms) < 1_000 &&
      n?.last_error === null &&
      alert === undefined
    )
      return { ok: true, what };
    await sleep(300);
  }
  return { ok: false, what };
}

async function stepClock(
  ctx: FaultContext,
  kind: 'clock-skew' | 'clock-drift',
  steps: readonly number[],
  proof: (n: NodeView, offsetMs: number) => boolean,
): Promise<FaultRecord> {
  const c = ctx.cluster;
  if (!c.faketime) throw new Error(`${kind} needs a NetCluster started with faketime`);
  const t = ctx.rng.pick(ctx.candidates);
  const { nodeId } = c.hostAt(t);
  const file = c.clockFile(t);
  let proved = '';
  let alertId: string | undefined;
  const appliedAt = Date.now();
  let liftedAt = appliedAt;
  const seen: string[] = [];
  try {
    for (const offset of steps) {
      setClock(file, offset);
      await sleep(PICKUP_MS);
      // On a loaded machine the host may read its new offset late: at the last step, while nothing is
      // proved yet, measure again (a refresh each time) until it is or STEP_PROOF_MS has passed.
      const last = offset === steps[steps.length - 1];
      const stepUntil = last ? Date.now() + STEP_PROOF_MS : 0;
      for (;;) {
        const n = await nodeOf(c, nodeId);
        const clk = n?.clock;
        seen.push(
          `${offset / 1000}s->${clk === null || clk === undefined ? '?' : `${clk.offset_ms}${clk.refused ? 'R' : ''}`}`,
        );
        if (
          n !== undefined &&
          clk !== null &&
          clk !== undefined &&
          clk.measured_at_ms >= appliedAt &&
          proof(n, offset)
        ) {
          alertId = await openAlert(c, nodeId);
          if (alertId !== undefined) {
            proved = `measured ${clk.offset_ms} ms (±${clk.error_ms}) for ${offset} ms, refused ${clk.refused}, alert ${alertId}`;
            break;
          }
        }
        if (proved !== '' || Date.now() >= stepUntil) break;
        await sleep(500);
      }
    }
  } finally {
    liftedAt = Date.now();
    setClock(file, 0);
  }
  await sleep(PICKUP_MS);
  const back = await recovered(c, nodeId);
  return {
    kind,
    targets: [t],
    params: steps.map((s) => `${s / 1000}s`).join(','),
    appliedAt,
    liftedAt,
    landed: proved !== '' && back.ok,
    evidence: `host ${t}: ${proved || `NOT PROVED (${seen.join(' ')})`}; after the lift: ${back.ok ? 'recovered' : 'NOT RECOVERED'} (${back.what})`,
  };
}

/** A host's clock stepped 40 to 60 s behind for the hold: refused as `expired`, alerted, recovered. */
export const clockSkew: NetFaultKind = {
  name: 'clock-skew',
  title: "a host's clock stepped past the 30 s skew window (libfaketime)",
  run(ctx: FaultContext): Promise<FaultRecord> {
    const offset = -ctx.rng.int(40, 60) * 1000;
    const steps = Array.from(
      { length: Math.max(1, Math.min(3, Math.floor(ctx.holdMs / PICKUP_MS))) },
      () => offset,
    );
    return stepClock(ctx, 'clock-skew', steps, (n, o) => {
      const clk = n.clock;
      return (
        clk?.refused === true &&
        Math.abs(clk.offset_ms - o) <= 1_500 + clk.error_ms &&
        (n.last_error ?? '').startsWith('clock skew:')
      );
    });
  },
};

/** A host's clock drifting ahead across the 10 s warning, inside the window: alerted while it answers. */
export const clockDrift: NetFaultKind = {
  name: 'clock-drift',
  title: "a host's clock drifting ahead past the warning threshold (libfaketime)",
  run(ctx: FaultContext): Promise<FaultRecord> {
    return stepClock(ctx, 'clock-drift', [4_000, 8_000, 12_000, 16_000], (n, o) => {
      const clk = n.clock;
      return (
        clk !== null && !clk.refused && o >= 12_000 && Math.abs(clk.offset_ms - o) <= 1_500 + clk.error_ms
      );
    });
  },
};
