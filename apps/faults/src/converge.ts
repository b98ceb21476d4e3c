// The convergence check run after every trial: the controller's state, every host's own listing and
// the native processes actually alive must agree that every desired instance runs exactly once, that
// nothing the API acknowledged was lost, that nothing is unsettled without a reason, and every chain
// must verify. Waits (bounded) for the system to get there; on failure returns a precise diff.

import { basename } from 'node:path';
import { errorMessage } from '@heddle/cli-kit';
import type { UnsettledRecord } from '@heddle/control-plane';
import type { Placement } from '@heddle/operator-api';
import type { Cluster } from './cluster.js';
import { nativeProcesses, workloadCopies } from './daemons.js';
import type { HostInstance, HostListing } from './observer.js';

/** A placement the API answered `placed` for: it must never be lost. */
export interface Acknowledged {
  readonly instance_id: string;
  readonly order_id: string;
  readonly node_id: string;
}

/** Everything the check looks at, read at one moment. */
export interface Snapshot {
  readonly placements: readonly Placement[];
  readonly unsettled: readonly UnsettledRecord[];
  readonly hosts: readonly HostView[];
  /** Why the controller could not be read, if it could not. */
  readonly controllerError?: string;
}

/** One host as read directly. */
export interface HostView {
  readonly index: number;
  readonly nodeId: string;
  readonly listing?: HostListing;
  readonly error?: string;
  /**
   * Native workload processes alive under its data directory, by instance id: one entry per copy (a
   * process group), found from the process table and from the host's pid files.
   */
  readonly natives: readonly { readonly instanceId: string; readonly pid: number }[];
}

/** Controller states in which an instance is gone for good (never counted as running). */
export const GONE_STATES: ReadonlySet<string> = new Set(['unloaded', 'lost', 'rescheduled', 'revoked']);

/** Controller states an instance passes through on its way to running (transient). */
export const TRANSIENT_STATES: ReadonlySet<string> = new Set(['placed', 'loaded', 'unhealthy', 'restarting']);

/** True when a host reports the instance running (adapter state, or the lifecycle state of newer hosts). */
export function hostRuns(i: HostInstance): boolean {
  return i.life === undefined ? i.state === 'running' : i.life === 'running';
}

/** The placement is meant to be running now. */
function live(p: Placement): boolean {
  return p.desired_running && !GONE_STATES.has(p.state);
}

/**
 * The problems of a snapshot (empty when converged). `acknowledged` lists what the API answered
 * `placed` for since the last reset; the orders in `retired` (ended by a reset) are not held to
 * running.
 */
export function diffSnapshot(
  s: Snapshot,
  acknowledged: readonly Acknowledged[],
  retired: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  if (s.controllerError !== undefined) return [`controller: cannot be read: ${s.controllerError}`];
  const byId = new Map(s.placements.map((p) => [p.instance_id, p]));
  // Orders the reset between trials retired (unloaded, or forgotten with their node) are not checked.
  const current = s.placements.filter((p) => !retired.has(p.order_id));
  const hostOf = new Map<string, { view: HostView; inst: HostInstance }>();
  for (const h of s.hosts) {
    if (h.listing === undefined) {
      problems.push(`host ${h.index} (${h.nodeId}) cannot be read: ${h.error ?? 'no answer'}`);
      continue;
    }
    for (const inst of h.listing.instances) hostOf.set(`${h.nodeId}/${inst.instance_id}`, { view: h, inst });
  }
  const readable = new Set(s.hosts.filter((h) => h.listing !== undefined).map((h) => h.nodeId));

  // 1. Every live placement runs on its node, as that instance.
  const liveByOrder = new Map<string, Placement[]>();
  for (const p of current) {
    if (!live(p)) continue;
    liveByOrder.set(p.order_id, [...(liveByOrder.get(p.order_id) ?? []), p]);
    if (!readable.has(p.node_id)) continue;
    const h = hostOf.get(`${p.node_id}/${p.instance_id}`);
    if (h === undefined) {
      problems.push(
        `${p.instance_id} is ${p.state} on ${short(p.node_id)} for the controller, but that host does not have it`,
      );
    } else if (!hostRuns(h.inst)) {
      problems.push(
        `${p.instance_id} is meant to run on ${short(p.node_id)}, the host says ${h.inst.state}${h.inst.life ? ` (life ${h.inst.life})` : ''}`,
      );
    } else if (p.state !== 'running') {
      problems.push(`${p.instance_id} runs on ${short(p.node_id)}, but the controller still says ${p.state}`);
    }
  }

  // 2. Exactly one live placement per order that has any placement not unloaded.
  const orders = new Map<string, Placement[]>();
  for (const p of current) orders.set(p.order_id, [...(orders.get(p.order_id) ?? []), p]);
  for (const [order, ps] of orders) {
    if (ps.every((p) => p.state === 'unloaded' || !p.desired_running)) continue;
    const n = liveByOrder.get(order)?.length ?? 0;
    if (n !== 1) {
      const states = ps.map((p) => `${p.instance_id}@${short(p.node_id)}=${p.state}`).join(', ');
      problems.push(`order ${order} has ${n} live instances (expected exactly 1): ${states}`);
    }
  }

  // 3. Every instance a host holds is a live placement of the controller on that host (or one the
  // operator stopped, and stopped there too).
  const unsettledIds = new Set(s.unsettled.map((u) => u.decision_id));
  for (const h of s.hosts) {
    for (const inst of h.listing?.instances ?? []) {
      const p = byId.get(inst.instance_id);
      if (p !== undefined && p.node_id === h.nodeId) {
        if (live(p)) continue;
        if (!p.desired_running && p.state === 'stopped' && !hostRuns(inst)) continue;
      }
      const why =
        p === undefined
          ? unsettledIds.has(inst.decision_id)
            ? `its decision ${short(inst.decision_id)} is still unsettled at the controller`
            : 'the controller has no placement for it (an orphan)'
          : `the controller says ${p.state} on ${short(p.node_id)}${p.desired_running ? '' : ' (not desired)'}`;
      problems.push(
        `host ${h.index} (${short(h.nodeId)}) holds ${inst.instance_id} (${inst.life ?? inst.state}): ${why}`,
      );
    }
    // 4. No native process runs that its host does not list as running, and none runs twice.
    const running = new Set((h.listing?.instances ?? []).filter(hostRuns).map((i) => i.instance_id));
    const copies = new Map<string, number[]>();
    for (const n of h.natives) copies.set(n.instanceId, [...(copies.get(n.instanceId) ?? []), n.pid]);
    for (const [id, pids] of copies) {
      if (pids.length > 1) {
        problems.push(
          `host ${h.index} (${short(h.nodeId)}): ${pids.length} copies of ${id} run (processes ${pids.join(', ')}, from the process table)`,
        );
      }
    }
    if (h.listing !== undefined) {
      for (const n of h.natives) {
        if (!running.has(n.instanceId)) {
          problems.push(
            `host ${h.index} (${short(h.nodeId)}): native process ${n.pid} of ${n.instanceId} runs, but the host does not list it running (a stray copy)`,
          );
        }
      }
    }
  }

  // 5. Nothing acknowledged is lost: it runs, or it ended (lost, rescheduled, unloaded as an orphan on
  // rejoin, ...) and a replacement of its order runs.
  for (const a of acknowledged) {
    const p = byId.get(a.instance_id);
    if (p === undefined) {
      problems.push(
        `acknowledged ${a.instance_id} (order ${a.order_id}) is gone from the controller's state`,
      );
    } else if (!live(p) && (liveByOrder.get(a.order_id)?.length ?? 0) === 0) {
      problems.push(
        `acknowledged ${a.instance_id} is ${p.state}${p.desired_running ? '' : ' (not desired)'} and nothing replaced it (order ${a.order_id}), though nobody asked`,
      );
    }
  }

  // 6. Nothing unsettled without a reason.
  for (const u of s.unsettled) {
    if (u.last_error.trim() === '') problems.push(`unsettled decision ${u.decision_id} has no reason`);
  }
  return problems;
}

const short = (id: string): string => id.slice(0, 8);

/**
 * One entry per copy of each native workload alive under `dataDir`: every process group of the
 * process table, and any pid-file process the table did not show (a process whose environment could
 * not be read).
 */
export function nativeCopies(dataDir: string): { instanceId: string; pid: number }[] {
  const table = workloadCopies(dataDir);
  const out = [...table].flatMap(([instanceId, pids]) => pids.map((pid) => ({ instanceId, pid })));
  for (const p of nativeProcesses(dataDir)) {
    const id = basename(p.instanceDir);
    if (!table.has(id)) out.push({ instanceId: id, pid: p.pid });
  }
  return out;
}

/** Reads a snapshot of the cluster now. */
export async function snapshot(cluster: Cluster): Promise<Snapshot> {
  const hosts: HostView[] = await Promise.all(
    cluster.hosts.map(async (h): Promise<HostView> => {
      const natives = nativeCopies(h.dataDir);
      if (h.daemon === undefined)
        return { index: h.index, nodeId: h.nodeId, error: 'the host is down', natives };
      try {
        return { index: h.index, nodeId: h.nodeId, listing: await cluster.listing(h.index), natives };
      } catch (err) {
        return { index: h.index, nodeId: h.nodeId, error: errorMessage(err), natives };
      }
    }),
  );
  try {
    const api = cluster.api();
    const [placements, unsettled] = await Promise.all([api.instances(), api.unsettled()]);
    return { placements, unsettled, hosts };
  } catch (err) {
    return { placements: [], unsettled: [], hosts, controllerError: errorMessage(err) };
  }
}

/** The outcome of {@link converge}. */
export interface Convergence {
  readonly ok: boolean;
  /** The problems left at the end (state and chains); empty when ok. */
  readonly problems: readonly string[];
  readonly elapsedMs: number;
  readonly snapshot: Snapshot;
}

/**
 * Waits up to `timeoutMs` for {@link diffSnapshot} to come back empty, then verifies every chain.
 * Never throws: a failure is `ok: false` with the problems of the last snapshot.
 */
export async function converge(
  cluster: Cluster,
  acknowledged: readonly Acknowledged[],
  timeoutMs = 20_000,
): Promise<Convergence> {
  const t0 = Date.now();
  let snap = await snapshot(cluster);
  let problems = diffSnapshot(snap, acknowledged, cluster.retired);
  while (problems.length > 0 && Date.now() - t0 < timeoutMs) {
    await new Promise((r) => setTimeout(r, 250));
    snap = await snapshot(cluster);
    problems = diffSnapshot(snap, acknowledged, cluster.retired);
  }
  const chains = await cluster.verifyChains();
  for (const c of chains) if (!c.ok) problems.push(c.problem ?? `${c.name} chain does not verify`);
  return { ok: problems.length === 0, problems, elapsedMs: Date.now() - t0, snapshot: snap };
}

/** The snapshot as a few lines for a failure message. */
export function describeSnapshot(s: Snapshot): string {
  const lines = ['controller placements:'];
  for (const p of s.placements) {
    if (p.state === 'unloaded') continue;
    lines.push(
      `  ${p.instance_id} ${short(p.node_id)} ${p.state} desired=${p.desired_running} order=${p.order_id}`,
    );
  }
  for (const u of s.unsettled)
    lines.push(`  unsettled ${short(u.decision_id)} on ${short(u.node_id)}: ${u.last_error}`);
  for (const h of s.hosts) {
    const insts = (h.listing?.instances ?? []).map((i) => `${i.instance_id}=${i.life ?? i.state}`).join(', ');
    lines.push(`host ${h.index} ${short(h.nodeId)}: ${h.error ?? (insts || '(empty)')}`);
  }
  return lines.join('\n');
}
