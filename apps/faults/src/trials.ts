// The fault-injection trials of issue 8. Each draws every choice (which host, when to kill, how long
// a daemon stays down, which proxy fault) from its seed; the convergence check after it is the same
// for all (converge.ts). A trial adds its own problems only for behaviour the issue demands beyond
// convergence (a dead node's instances running elsewhere in time).
import { join } from 'node:path';
import type { Placement } from '@heddle/operator-api';
import type { ProxyMode, ProxyStats } from './chaos-proxy.js';
import { controllerTunables } from './daemons.js';
import type { PackageKind } from './packages.js';
import type { TrialContext, TrialKind } from './trial-kit.js';
import {
  chainEnd,
  chainSince,
  controllerRecordedPlace,
  decisions,
  hostFinishedPlace,
  watch,
} from './windows.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 250 ms until it returns a value, or `timeoutMs` passes (then undefined). */
async function poll<T>(timeoutMs: number, check: () => Promise<T | undefined>): Promise<T | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined || Date.now() > until) return v;
    await sleep(250);
  }
}

/** The controller's dead_after in ms: its configured value when the controller offers the field, else the default 30 s. */
export function deadAfterMs(): number {
  const lifecycle = controllerTunables().lifecycle;
  const secs =
    typeof lifecycle === 'object' && lifecycle !== null
      ? Reflect.get(lifecycle, 'dead_after_secs')
      : undefined;
  return typeof secs === 'number' ? secs * 1000 : 30_000;
}

const liveElsewhere = (ps: readonly Placement[], order: string, avoid: string): Placement | undefined =>
  ps.find((p) => p.order_id === order && p.node_id !== avoid && p.state === 'running' && p.desired_running);

function victimOf(ctx: TrialContext): { index: number; nodeId: string } {
  const index = ctx.rng.int(0, ctx.cluster.hosts.length - 1);
  return { index, nodeId: ctx.cluster.hosts[index]?.nodeId ?? '' };
}

/** Waits until the proxy in front of host `index` has seen a new request (bounded), so a fault hits the call. */
async function requestSeen(ctx: TrialContext, index: number, before: number): Promise<boolean> {
  const proxy = ctx.cluster.hosts[index]?.proxy;
  if (proxy === undefined) return false;
  return (await poll(5_000, async () => (proxy.stats.requests > before ? true : undefined))) === true;
}

/** Notes what the proxy of host `index` did since `before` (so a report shows the fault hit). */
function noteProxy(ctx: TrialContext, index: number, before: ProxyStats | undefined): void {
  const now = ctx.cluster.hosts[index]?.proxy?.stats;
  if (now === undefined || before === undefined) return;
  ctx.note(
    `proxy of host ${index}: ${now.requests - before.requests} request(s), ${now.cut - before.cut} connection(s) cut, ${now.swallowed - before.swallowed} byte(s) swallowed`,
  );
}

/**
 * Kill -9 of a host while it handles a place: once the host lists the place in flight (read directly
 * with the observer), a random 0 to 30 ms later. It landed when the host had the place in flight and
 * its chain holds no end of that place at the kill.
 */
export const hostKillDuringPlace: TrialKind = {
  group: 'host-place',
  title: 'kill -9 of a host during place',
  waitsOn: 'host re-adoption after restart (instances.json) + controller reconciliation of lost instances',
  async run(ctx) {
    const victim = victimOf(ctx);
    const kind = ctx.rng.pick<PackageKind>(['wasi', 'native']);
    const killAfter = ctx.rng.int(0, 30);
    const downFor = ctx.rng.int(0, 1500);
    const host = ctx.cluster.hosts[victim.index];
    const chainPath = join(host?.dataDir ?? '', 'chain.jsonl');
    const from = chainEnd(chainPath);
    const before = new Set(
      ((await ctx.cluster.listing(victim.index).catch(() => undefined))?.in_flight ?? []).map(
        (d) => d.decision_id,
      ),
    );
    const placing = ctx.place(kind, { prefer: [victim.nodeId] });
    const inFlight = await watch(5_000, 2, async () => {
      const l = await ctx.cluster.listing(victim.index);
      return l.in_flight.find((d) => d.decision_id !== '' && !before.has(d.decision_id))?.decision_id;
    });
    await sleep(killAfter);
    await ctx.cluster.killHost(victim.index);
    ctx.note(`killed host ${victim.index} ${killAfter} ms after it listed the place of ${kind} in flight`);
    if (inFlight === undefined) ctx.missed(`host ${victim.index} never listed the place in flight`);
    else if (hostFinishedPlace(chainSince(chainPath, from).records, inFlight))
      ctx.missed(
        `host ${victim.index} had chained the end of the place of ${inFlight.slice(0, 8)} before the kill`,
      );
    else
      ctx.landed(
        `host ${victim.index} listed decision ${inFlight.slice(0, 8)} in flight and its chain holds no end of that place at the kill`,
      );
    await sleep(downFor);
    await ctx.cluster.startHost(victim.index);
    ctx.note(`host ${victim.index} restarted after ${downFor} ms`);
    await placing;
    ctx.convergeMs = 45_000;
  },
};

/** Kill -9 of a host while it fetches a 3 MiB package (throttled by its proxy), at a random fraction of it. */
export const hostKillDuringTransfer: TrialKind = {
  group: 'host-transfer',
  title: 'kill -9 of a host during the package transfer',
  waitsOn:
    'nothing known (the host never acted: the place stays unsettled with a reason until its request expires)',
  async run(ctx) {
    const victim = victimOf(ctx);
    const proxy = ctx.cluster.hosts[victim.index]?.proxy;
    const rate = ctx.rng.int(2, 4) * 1024 * 1024;
    const fraction = ctx.rng.int(5, 90) / 100;
    const downFor = ctx.rng.int(0, 1500);
    proxy?.set({ kind: 'pass', bytesPerSec: rate });
    let killing: Promise<void> | undefined;
    const out = await ctx.place('native-big', {
      prefer: [victim.nodeId],
      onProgress: (p) => {
        if (killing === undefined && p.node_id === victim.nodeId && p.bytes >= fraction * p.total) {
          ctx.note(`killing host ${victim.index} at ${p.bytes} of ${p.total} bytes`);
          killing = (async () => {
            await ctx.cluster.killHost(victim.index);
            await sleep(downFor);
            await ctx.cluster.startHost(victim.index);
            ctx.note(`host ${victim.index} restarted after ${downFor} ms`);
          })();
        }
      },
    });
    await killing;
    proxy?.heal();
    if (killing === undefined)
      ctx.note(`the transfer never reached ${fraction} on host ${victim.index} (${out.outcome})`);
    ctx.convergeMs = 45_000;
  },
};

/** Kill -9 of the host an instance runs on, restarted on its home after a random time. */
export const hostKillWhileRunning: TrialKind = {
  group: 'host-running',
  title: 'kill -9 of a host while its instance runs',
  waitsOn: 'host re-adoption after restart (native) / lost report + controller reschedule (WASI)',
  async run(ctx) {
    const victim = victimOf(ctx);
    const kind = ctx.rng.pick<PackageKind>(['wasi', 'native']);
    const runFor = ctx.rng.int(0, 1500);
    const downFor = ctx.rng.int(0, 2000);
    const out = await ctx.place(kind, { prefer: [victim.nodeId] });
    const on = out.result?.instance?.node_id;
    const index = ctx.cluster.hosts.findIndex((h) => h.nodeId === on);
    if (index < 0) {
      ctx.problems.push(`the place before the fault did not succeed: ${out.outcome} ${out.message ?? ''}`);
      return;
    }
    await sleep(runFor);
    await ctx.cluster.killHost(index);
    ctx.note(`killed host ${index} after ${runFor} ms of running`);
    await sleep(downFor);
    await ctx.cluster.startHost(index);
    ctx.note(`host ${index} restarted after ${downFor} ms`);
    // Re-adoption is immediate; a lost WASI instance is placed again after the first backoff (10 s).
    ctx.convergeMs = 30_000;
  },
};

/**
 * Kill -9 of the controller while a place is out: once its chain holds the decision, a random 0 to 40
 * ms later. It landed when the decision was chained and the answer was not recorded at the kill.
 */
export const controllerKillDuringPlace: TrialKind = {
  group: 'controller-place',
  title: 'kill -9 of the controller during place',
  waitsOn: 'nothing known (settled at the next start from SQLite)',
  async run(ctx) {
    const kind = ctx.rng.pick<PackageKind>(['wasi', 'native']);
    const killAfter = ctx.rng.int(0, 40);
    const downFor = ctx.rng.int(0, 1000);
    const chainPath = join(ctx.cluster.controllerHome, 'chain.jsonl');
    const from = chainEnd(chainPath);
    const placing = ctx.place(kind);
    const decision = await watch(5_000, 2, () => decisions(chainSince(chainPath, from).records).at(-1));
    await sleep(killAfter);
    await ctx.cluster.killController();
    ctx.note(`killed the controller ${killAfter} ms after it chained the decision of the place of ${kind}`);
    if (decision === undefined) ctx.missed('the controller never chained the decision');
    else if (controllerRecordedPlace(chainSince(chainPath, from).records, decision.hash))
      ctx.missed(`the controller had recorded the answer of ${decision.hash.slice(0, 8)} before the kill`);
    else
      ctx.landed(
        `the controller had chained decision ${decision.hash.slice(0, 8)} and recorded no answer to it at the kill`,
      );
    await placing;
    await sleep(downFor);
    await ctx.cluster.startController();
    ctx.note(`controller restarted after ${downFor} ms`);
    ctx.convergeMs = 20_000;
  },
};

/** Kill -9 of the controller while it reschedules the instances of a dead host. */
export const controllerKillDuringReschedule: TrialKind = {
  group: 'controller-reschedule',
  title: 'kill -9 of the controller during a reschedule',
  waitsOn: 'controller lifecycle tick (node death, reschedule with backoff, persisted reschedules)',
  async run(ctx) {
    const victim = victimOf(ctx);
    const out = await ctx.place('wasi', { prefer: [victim.nodeId] });
    const inst = out.result?.instance;
    if (inst == null) {
      ctx.problems.push(`the place before the fault did not succeed: ${out.outcome} ${out.message ?? ''}`);
      return;
    }
    const index = ctx.cluster.hosts.findIndex((h) => h.nodeId === inst.node_id);
    await ctx.cluster.killHost(index);
    const t0 = Date.now();
    ctx.note(`killed host ${index}; waiting for the controller to declare it dead`);
    const dead = await poll(deadAfterMs() + 10_000, async () =>
      (await ctx.cluster.nodes()).find((n) => n.node_id === inst.node_id && n.liveness === 'dead'),
    );
    if (dead === undefined) ctx.problems.push(`host ${index} was not declared dead within dead_after + 10 s`);
    const killAfter = ctx.rng.int(0, 3000);
    await sleep(killAfter);
    await ctx.cluster.killController();
    ctx.note(
      `killed the controller ${killAfter} ms after the node was dead (${Date.now() - t0} ms after the host)`,
    );
    await sleep(ctx.rng.int(0, 1000));
    await ctx.cluster.startController();
    ctx.note('controller restarted');
    const bound = deadAfterMs() + 15_000;
    const moved = await poll(bound, async () =>
      liveElsewhere(await ctx.cluster.api().instances(), inst.order_id, inst.node_id),
    );
    if (moved === undefined) {
      ctx.problems.push(
        `order ${inst.order_id} was not running elsewhere within ${bound} ms of the controller's restart (dead_after + 15 s)`,
      );
    } else ctx.note(`rescheduled as ${moved.instance_id} on ${moved.node_id.slice(0, 8)}`);
    await ctx.cluster.startHost(index);
    ctx.note(`host ${index} back`);
    ctx.convergeMs = 30_000;
  },
};

/**
 * Places `kind` on `victim` with its proxy in `mode`: once the proxy saw the request, `hold()` runs
 * (the fault lasts that long), then the proxy heals and the place's outcome is awaited and noted.
 */
async function placeThroughProxy(
  ctx: TrialContext,
  victim: { index: number; nodeId: string },
  kind: PackageKind,
  mode: ProxyMode,
  label: string,
  hold: () => Promise<void>,
): Promise<void> {
  const proxy = ctx.cluster.hosts[victim.index]?.proxy;
  const stats = proxy === undefined ? undefined : { ...proxy.stats };
  const before = proxy?.stats.requests ?? 0;
  proxy?.set(mode);
  ctx.note(`host ${victim.index}: ${label}; placing ${kind}`);
  const placing = ctx.place(kind, { prefer: [victim.nodeId] });
  await requestSeen(ctx, victim.index, before);
  await hold();
  proxy?.heal();
  await placing;
  noteProxy(ctx, victim.index, stats);
}

/** The answer of a place is swallowed by the node's proxy (the host may have acted), then the connection is cut. */
export const proxyDrop: TrialKind = {
  group: 'proxy',
  title: 'proxy drops the answer of a place (indeterminate)',
  waitsOn: 'nothing known (reconciled with status, or kept unsettled with a reason)',
  async run(ctx) {
    const victim = victimOf(ctx);
    // Mostly the package the host already holds (it acts at once); sometimes one it must fetch, whose
    // fetch the drop also starves.
    const kind = ctx.rng.chance(0.8) ? 'wasi' : 'native';
    const cutAfterMs = ctx.rng.int(100, 1500);
    const healAfter = ctx.rng.int(200, 3000);
    await placeThroughProxy(
      ctx,
      victim,
      kind,
      { kind: 'drop', cutAfterMs },
      `drop answers, cut after ${cutAfterMs} ms`,
      async () => {
        await sleep(healAfter);
        ctx.note(`healed after ${healAfter} ms`);
      },
    );
    ctx.convergeMs = 20_000;
  },
};

/** The connection of a place is cut a random time after the request was sent (racing the answer). */
export const proxyCut: TrialKind = {
  group: 'proxy',
  title: 'proxy cuts the connection after the request',
  waitsOn: 'nothing known (reconciled with status, or kept unsettled with a reason)',
  async run(ctx) {
    const victim = victimOf(ctx);
    const kind = ctx.rng.chance(0.8) ? 'wasi' : 'native';
    // A place of a package the host holds is answered in some 20 to 100 ms: cut around that.
    const afterMs = ctx.rng.int(0, 80);
    await placeThroughProxy(
      ctx,
      victim,
      kind,
      { kind: 'cut', afterMs },
      `cut ${afterMs} ms after each request`,
      () => sleep(afterMs + ctx.rng.int(50, 500)),
    );
    ctx.convergeMs = 20_000;
  },
};

/** Every byte to and from a node is delayed (sometimes past the call timeout) while a place runs. */
export const proxyDelay: TrialKind = {
  group: 'proxy',
  title: 'proxy delays a place',
  waitsOn: 'nothing known',
  async run(ctx) {
    const victim = victimOf(ctx);
    const ms = ctx.rng.int(50, 1200);
    const proxy = ctx.cluster.hosts[victim.index]?.proxy;
    proxy?.set({ kind: 'delay', ms });
    ctx.note(`host ${victim.index}: delay ${ms} ms each way`);
    await ctx.place(ctx.rng.pick<PackageKind>(['wasi', 'native']), { prefer: [victim.nodeId] });
    proxy?.heal();
    ctx.convergeMs = 20_000;
  },
};

/** A node is partitioned until it is declared dead, its instance must run elsewhere; then the partition heals. */
export const partitionHeal: TrialKind = {
  group: 'partition',
  title: 'partition that heals after the node was declared dead',
  waitsOn: 'controller lifecycle tick (reschedule of a dead node, orphan unload on rejoin)',
  async run(ctx) {
    const victim = victimOf(ctx);
    const style = ctx.rng.pick(['refuse', 'blackhole'] as const);
    const out = await ctx.place(ctx.rng.pick<PackageKind>(['wasi', 'native']), { prefer: [victim.nodeId] });
    const inst = out.result?.instance;
    if (inst == null) {
      ctx.problems.push(`the place before the fault did not succeed: ${out.outcome} ${out.message ?? ''}`);
      return;
    }
    const index = ctx.cluster.hosts.findIndex((h) => h.nodeId === inst.node_id);
    const proxy = ctx.cluster.hosts[index]?.proxy;
    proxy?.set({ kind: 'partition', style });
    const t0 = Date.now();
    ctx.note(`partitioned host ${index} (${style})`);
    const dead = await poll(deadAfterMs() + 10_000, async () =>
      (await ctx.cluster.nodes()).find((n) => n.node_id === inst.node_id && n.liveness === 'dead'),
    );
    if (dead === undefined) ctx.problems.push(`host ${index} was not declared dead within dead_after + 10 s`);
    else ctx.note(`declared dead after ${Date.now() - t0} ms`);
    const bound = deadAfterMs() + 5_000 - (Date.now() - t0) + 10_000;
    const moved = await poll(Math.max(bound, 1_000), async () =>
      liveElsewhere(await ctx.cluster.api().instances(), inst.order_id, inst.node_id),
    );
    if (moved === undefined) {
      ctx.problems.push(
        `order ${inst.order_id} was not running elsewhere within dead_after + 15 s of the partition`,
      );
    } else ctx.note(`running elsewhere after ${Date.now() - t0} ms: ${moved.instance_id}`);
    await sleep(ctx.rng.int(0, 2000));
    proxy?.heal();
    ctx.note('healed');
    ctx.convergeMs = 30_000;
  },
};
