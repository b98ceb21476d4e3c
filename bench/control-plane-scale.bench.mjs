// @heddle/control-plane at fleet scale (issue 19, benchmarks (a) and (d)): places through the
// control-plane library itself (package verified once and held, engine, gate checks, chained decision,
// attempt and lifecycle records on a file chain, durable SQLite state with group commit) onto nodes of
// an in-process driver (a NodeDriver whose place is answered in this process: no network), versus the
// placement engine alone deciding on the same view in the same run (the baseline).
// Also: the per-place cost at 1,000, 2,000 and 10,000 nodes (their ratio), controller memory per node,
// and an unplaceable request at 10,000 nodes. Imports the built packages: run `pnpm build` first.
//   --instances=N   instances placed onto the big fleet (default 20,000; the goal is 1,000,000)
//   --nodes=N       nodes of the big fleet (default 10,000)
//   --per-place=N   places measured at 1k and at 10k nodes (default 3,000)
//   --concurrency=N places in flight (default 256)
// The 1M run: node --expose-gc --max-old-space-size=8192 bench/control-plane-scale.bench.mjs --instances=1000000
// (prints a progress line every 50,000 places from 200,000 instances on)
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openChainFile } from '@heddle/chain';
import { ControlPlane } from '@heddle/control-plane';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { Gate } from '@heddle/gate';
import { buildCogPackage, NO_REVOCATIONS, readEnvelope } from '@heddle/package';
import { cogPlacementRequest, PlacementState, PlacementView, place } from '@heddle/placement';
import { report } from './harness.mjs';
import {
  anchors,
  CAPS,
  controller,
  InProcessDriver,
  nodeId,
  policy,
  publisher,
} from './in-process-plane.mjs';

const arg = (name, dflt) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const INSTANCES = arg('instances', 20_000);
const NODES = arg('nodes', 10_000);
const PER_PLACE = arg('per-place', 3_000);
const CONCURRENCY = arg('concurrency', 256);

const dir = mkdtempSync(join(tmpdir(), 'heddle-cp-scale-'));

async function openPlane(name, nodes) {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  // As the controller daemon opens it: only the newest events in memory (docs/chain.md).
  const chain = await openChainFile(join(d, 'chain.jsonl'), { retainEvents: 10_000 });
  const store = SqliteStateStore.open(join(d, 'state.db'));
  const plane = new ControlPlane({
    keys: controller,
    store,
    chain,
    gate: new Gate({ policy, recorder: chain }),
    anchors,
    revocations: NO_REVOCATIONS,
    stateDir: d,
    drivers: [new InProcessDriver()],
  });
  const heap0 = heapUsed();
  // Nodes join with group commit too (a thousand at a time share a transaction).
  for (let i = 0; i < nodes; i += 1000) {
    await store.grouped(async () => {
      await Promise.all(
        Array.from({ length: Math.min(1000, nodes - i) }, (_, k) =>
          plane.addNodeOf('sim', `sim://${nodeId(i + k)}`, { tier: 'paired' }),
        ),
      );
      await store.durable();
    });
  }
  const joinHeap = heapUsed() - heap0;
  return { plane, store, chain, dir: d, joinHeap };
}

// A full collection before each heap reading (the flag is set at run time: `pnpm bench` passes none).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

function heapUsed() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** CPU seconds of this process since `from` (a `process.cpuUsage()` reading). */
const cpuSince = (from) => {
  const c = process.cpuUsage(from);
  return (c.user + c.system) / 1e6;
};

/**
 * Places `count` instances (`values.n` from `from`), `CONCURRENCY` in flight; returns places/s. With
 * `progressEvery`, prints a line every that many places (wall and CPU time so far, heap, RSS), so that
 * a long run that is stopped still leaves figures.
 */
async function placeMany(plane, manifest, count, from = 0, progressEvery = 0) {
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const r = await plane.place({ manifest_hash: manifest, values: { n: from + i }, start: true });
        if (r.status !== 'placed') throw new Error(`place ${i}: ${r.status}`);
        done++;
        if (progressEvery > 0 && done % progressEvery === 0) {
          const m = process.memoryUsage();
          console.log(
            `  progress: ${done.toLocaleString('en-US')} placed, ${((performance.now() - t0) / 1000).toFixed(0)} s wall, ${cpuSince(c0).toFixed(1)} s CPU, heap ${(m.heapUsed / 2 ** 20).toFixed(0)} MiB, rss ${(m.rss / 2 ** 20).toFixed(0)} MiB, ${new Date().toISOString()}`,
          );
        }
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

async function close(p) {
  p.store.close();
  await p.chain.close();
}

try {
  const pkg = join(dir, 'pkg');
  await buildCogPackage(new URL('../examples/wasi-cog', import.meta.url).pathname, pkg, {
    keys: [publisher],
  });
  const nativePkg = join(dir, 'native');
  await buildCogPackage(new URL('../examples/native-cog', import.meta.url).pathname, nativePkg, {
    keys: [publisher],
  });

  // Per-place cost at 1k and at 10k nodes: the same places on fleets of each size.
  const perPlace = [];
  for (const n of [1_000, 2_000, 10_000]) {
    const p = await openPlane(`per-${n}`, n);
    const first = await p.plane.place({ package_dir: pkg, values: { n: -1 }, start: true });
    const manifest = first.instance.manifest_hash;
    await placeMany(p.plane, manifest, Math.min(500, PER_PLACE)); // warm-up
    const c0 = process.cpuUsage();
    const wall = await placeMany(p.plane, manifest, PER_PLACE, 1_000_000);
    perPlace.push({ wall, cpuMs: (1000 * cpuSince(c0)) / PER_PLACE });
    await close(p);
  }

  // The big fleet: memory per node, the engine baseline, an unplaceable request, and the long run.
  const big = await openPlane('big', NODES);
  const memPerNode = big.joinHeap / NODES;
  const first = await big.plane.place({ package_dir: pkg, values: { n: -1 }, start: true });
  const manifest = first.instance.manifest_hash;

  // Baseline: the placement engine alone, deciding and reserving on a view of the same nodes.
  const now = Date.now();
  const view = PlacementView.create(
    Array.from({ length: NODES }, (_, i) => ({
      node_id: nodeId(i),
      tier: 'paired',
      liveness: 'alive',
      capabilities: CAPS,
    })),
    { validate: false },
  );
  const state = new PlacementState();
  const cog = readEnvelope(pkg).body;
  let engineDecisions = 0;
  const te = performance.now();
  while (performance.now() - te < 1500) {
    const req = cogPlacementRequest(cog, { workload: cog.id, package_id: first.instance.package_id });
    const d = place(req, view, state, { now_ms: now, detail: 'summary' });
    if (d.outcome === 'placed') state.reserve(d.reservation, view);
    engineDecisions++;
  }
  const enginePerSec = engineDecisions / ((performance.now() - te) / 1000);

  // The engine alone on an unplaceable request at this size: answered from the capability index,
  // against the full scan every node's reasons need (what it did before, and still does at or below
  // sample_above_nodes).
  const nativeCog = readEnvelope(nativePkg).body;
  const nativeReq = cogPlacementRequest(nativeCog, { workload: nativeCog.id });
  const engineMs = (options) => {
    const c = process.cpuUsage();
    let n = 0;
    const t = performance.now();
    while (performance.now() - t < 1000 || n < 3) {
      if (place(nativeReq, view, state, { now_ms: now, ...options }).outcome !== 'unplaceable')
        throw new Error('placed a native cog');
      n++;
    }
    return (1000 * cpuSince(c)) / n;
  };
  const fullScanMs = engineMs({ sample_above_nodes: Number.POSITIVE_INFINITY });
  const indexMs = engineMs({});

  // An unplaceable request: a native cog, and no node offers runtime.native. Baseline: a placeable
  // dry run on the same fleet.
  const unplaceable = async (order) => {
    try {
      await big.plane.place(order);
      throw new Error('placed a cog no node can run');
    } catch (err) {
      if (err.code !== 'unplaceable') throw err;
    }
  };
  await unplaceable({ package_dir: nativePkg });
  const nativeManifest = readEnvelope(nativePkg).manifestHash;
  // CPU milliseconds per call (the machine may be shared: wall time would count others' work).
  const timeIt = async (fn, rounds = 200) => {
    await fn();
    const c = process.cpuUsage();
    for (let i = 0; i < rounds; i++) await fn();
    return (1000 * cpuSince(c)) / rounds;
  };
  const unplaceableMs = await timeIt(() => unplaceable({ manifest_hash: nativeManifest }));
  const dryRunMs = await timeIt(() => big.plane.place({ manifest_hash: manifest, dry_run: true }));

  const tBig = performance.now();
  const cpu0 = process.cpuUsage();
  const bigRate = await placeMany(big.plane, manifest, INSTANCES, 0, INSTANCES >= 200_000 ? 50_000 : 0);
  // On a shared machine the wall clock counts other processes' time too: CPU time is this one's.
  const cpuSeconds = cpuSince(cpu0);
  const bigSeconds = (performance.now() - tBig) / 1000;
  const commits = big.store.groupCommits;
  const heapAfter = heapUsed();
  await close(big);

  report(
    `control plane at scale: ${INSTANCES.toLocaleString('en-US')} instances onto ${NODES.toLocaleString('en-US')} in-process nodes, ${CONCURRENCY} in flight (SQLite + chain, group commit)`,
    [
      ['engine alone, decide + reserve (baseline)', enginePerSec, 'decisions/s'],
      ['places through the control plane', bigRate, 'places/s', bigRate / enginePerSec],
      [`time for ${INSTANCES.toLocaleString('en-US')} instances`, bigSeconds, 's'],
      ['projected time for 1,000,000 instances', 1_000_000 / bigRate, 's (goal < 300)'],
      [
        'CPU time of this process for the run',
        cpuSeconds,
        `s (${(INSTANCES / cpuSeconds).toFixed(0)} places per CPU second)`,
      ],
      ['projected CPU time for 1,000,000 instances', (1_000_000 * cpuSeconds) / INSTANCES, 's'],
      ['SQLite commits (each one fsync)', commits, `for ${INSTANCES + 1} places`],
      ['places/s at 1,000 nodes (wall)', perPlace[0].wall, 'places/s'],
      ['places/s at 10,000 nodes (wall)', perPlace[2].wall, 'places/s'],
      ['CPU per place at 1,000 nodes (baseline)', perPlace[0].cpuMs, 'ms'],
      ['CPU per place at 2,000 nodes', perPlace[1].cpuMs, 'ms', perPlace[1].cpuMs / perPlace[0].cpuMs],
      ['CPU per place at 10,000 nodes', perPlace[2].cpuMs, 'ms', perPlace[2].cpuMs / perPlace[0].cpuMs],
      ['per-place cost 10k / 1k nodes (CPU)', perPlace[2].cpuMs / perPlace[0].cpuMs, 'x (goal <= 1.2)'],
      ['per-place cost 10k / 2k nodes (CPU, both sampled)', perPlace[2].cpuMs / perPlace[1].cpuMs, 'x'],
      ['controller heap per node (after joins, GC)', memPerNode, 'bytes/node'],
      ['heap after the run', heapAfter / 1048576, 'MiB'],
      ['engine: unplaceable at 10k nodes, full scan (baseline)', fullScanMs, 'ms CPU'],
      ['engine: unplaceable at 10k nodes, capability index', indexMs, 'ms CPU', indexMs / fullScanMs],
      ['placeable dry run at 10k nodes, CPU (baseline)', dryRunMs, 'ms'],
      ['unplaceable request at 10k nodes, CPU', unplaceableMs, 'ms', unplaceableMs / dryRunMs],
    ],
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
