// Evidence for network faults: TCP probes from the controller's namespace (through no relay: straight
// to the host's address, as the controller's own packets go) and the controller's health view.

import { HOST_PORT } from '../fabric.js';
import type { NetCluster } from '../net-cluster.js';
import type { ProbeResult } from '../relay.js';

/** A probe result with when it was taken. */
export interface TimedProbe {
  /** When the relay started the connect (epoch ms; under load later than when it was asked). */
  readonly at: number;
  /** When the relay had its outcome (epoch ms). */
  readonly doneAt: number;
  readonly host: number;
  readonly probe: ProbeResult;
}

/** Connects to host `i`'s listener from the controller's namespace. */
export async function probeHost(c: NetCluster, i: number, timeoutMs = 1_000): Promise<TimedProbe> {
  const probe = await c.relay.probe(`${c.fabric.ip(i)}:${HOST_PORT}`, timeoutMs);
  return { at: probe.sentAt, doneAt: probe.sentAt + probe.ms, host: i, probe };
}

/** A probe that saw silence (or a local "no route", never a reset or an answer). */
export function silent(p: TimedProbe): boolean {
  return p.probe.result === 'timeout' || p.probe.result === 'unreachable';
}

/**
 * Holds for `holdMs`, probing every target about once a second from the controller's namespace and
 * reading the controller's health view; returns what was seen. The caller lifts the fault after.
 */
export async function holdAndProbe(
  c: NetCluster,
  targets: readonly number[],
  holdMs: number,
): Promise<{ probes: TimedProbe[]; unreachableSince: Map<number, number> }> {
  const until = Date.now() + holdMs;
  const probes: TimedProbe[] = [];
  const unreachableSince = new Map<number, number>();
  while (Date.now() < until) {
    const left = until - Date.now();
    const round = Promise.all(targets.map((t) => probeHost(c, t, Math.max(200, Math.min(1_000, left - 50)))));
    const view = c
      .nodes()
      .then((nodes) => {
        for (const t of targets) {
          const n = nodes.find((x) => x.node_id === c.hostAt(t).nodeId);
          if (n?.unreachable_since_ms != null && !unreachableSince.has(t))
            unreachableSince.set(t, n.unreachable_since_ms);
        }
      })
      .catch(() => undefined);
    probes.push(...(await round));
    await view;
    const wait = Math.min(until - Date.now(), 500);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return { probes, unreachableSince };
}

/**
 * The verdict of a partition: landed when, for every target, a probe taken inside the window saw
 * silence (and none was answered); the controller's view is added to the evidence when it saw it.
 */
export function partitionVerdict(
  targets: readonly number[],
  seen: { probes: readonly TimedProbe[]; unreachableSince: ReadonlyMap<number, number> },
  appliedAt: number,
  liftedAt: number,
): { landed: boolean; evidence: string } {
  const parts: string[] = [];
  let landed = true;
  for (const t of targets) {
    // Probes sent and answered inside the window (one that outlived the window proves nothing).
    const inside = seen.probes.filter((p) => p.host === t && p.at >= appliedAt && p.doneAt <= liftedAt);
    const quiet = inside.filter(silent);
    const answered = inside.filter((p) => !silent(p));
    if (quiet.length === 0 || answered.length > 0) landed = false;
    const since = seen.unreachableSince.get(t);
    const ctl =
      since !== undefined && since >= appliedAt - 1_000 && since <= liftedAt
        ? `, the controller saw it unreachable from +${since - appliedAt} ms`
        : '';
    parts.push(
      `host ${t}: ${quiet.length} of ${inside.length} probes from the controller's namespace silent (${[...new Set(inside.map((p) => p.probe.result))].join('/') || 'none'})${ctl}`,
    );
  }
  return { landed, evidence: parts.join('; ') };
}
