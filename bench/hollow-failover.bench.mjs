// Benchmark (c) of issue 19: 10% of `--hosts` hollow hosts (default 5,000, in another process) die at
// once, as a power loss (their connections cut, ports closed, instances gone); the time until every
// instance they held runs elsewhere. A real controller daemon with `dead_after` = `--dead-after`
// (default 10 s) and `--instances` listener instances (default 500) placed first through its API. The
// hosts that die are those holding the most instances (then others, up to 10%), so that a 10% loss
// moves as many instances as it can. Baseline in the same run: dead_after itself (the wait the
// controller makes on purpose before it judges a host dead). Goal: <= dead_after + 10 s.
// Built CLIs: `pnpm build` first. `--chain=memory` keeps the hosts' chains in memory (fewer files).
import { report } from './harness.mjs';
import { inFlight, startCluster } from './hollow-cluster.mjs';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const HOSTS = Number(arg('hosts', 5000));
const DEAD_AFTER = Number(arg('dead-after', 10));
const INSTANCES = Number(arg('instances', 500));
const CHAIN = arg('chain', 'file');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const cluster = await startCluster({ hosts: HOSTS, deadAfterSecs: DEAD_AFTER, refreshSecs: 2, chain: CHAIN });
try {
  const { api } = cluster;
  const first = await api.place({
    package_dir: cluster.packageDir,
    mode: { type: 'listener' },
    values: { label: 'f0' },
  });
  const hash = first.instance.manifest_hash;
  const tPlace = performance.now();
  const placed = await inFlight(INSTANCES - 1, 16, async (i) => {
    const a = await api.place({
      manifest_hash: hash,
      mode: { type: 'listener' },
      values: { label: `f${i + 1}` },
    });
    if (a.status !== 'placed') throw new Error(`place: ${a.status}`);
  });
  const placeMs = performance.now() - tPlace;
  if (placed.errors.length > 0)
    console.log(`  ${placed.errors.length} places failed: ${placed.errors[0].message}`);
  const before = (await api.instances()).filter((p) => p.state === 'running');
  // The victims: the hosts holding the most instances, then others, 10% of the fleet.
  const byNode = new Map();
  for (const p of before) byNode.set(p.node_id, (byNode.get(p.node_id) ?? 0) + 1);
  const indexOf = new Map(cluster.hostsFile.map((h) => [h.node_id, h.index]));
  const kill = Math.floor(HOSTS / 10);
  const holders = [...byNode.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => indexOf.get(id));
  const others = cluster.hostsFile.map((h) => h.index).filter((i) => !holders.includes(i));
  const victims = [...holders, ...others].slice(0, kill);
  const victimIds = new Set(victims.map((i) => cluster.hostsFile[i].node_id));
  const moved = before.filter((p) => victimIds.has(p.node_id)).map((p) => p.instance_id);
  const killed = await cluster.control({ cmd: 'kill', hosts: victims });
  const t0 = killed.at_ms;
  let deadMs;
  let doneMs;
  for (;;) {
    const now = Date.now();
    if (deadMs === undefined) {
      const nodes = await api.nodes();
      const dead = nodes.filter((n) => victimIds.has(n.node_id) && n.liveness === 'dead').length;
      if (dead === victimIds.size) deadMs = Date.now() - t0;
    }
    const all = await api.instances();
    // Each moved instance's lineage (a replacement may be replaced again) ends running on a live host.
    const next = new Map(all.filter((p) => p.replaces != null).map((p) => [p.replaces, p]));
    let replaced = 0;
    for (const id of moved) {
      let p = next.get(id);
      while (p !== undefined && next.has(p.instance_id)) p = next.get(p.instance_id);
      if (p?.state === 'running' && !victimIds.has(p.node_id)) replaced++;
    }
    if (replaced === moved.length) {
      doneMs = Date.now() - t0;
      break;
    }
    if (now - t0 > (DEAD_AFTER + 600) * 1000) {
      console.log(`  gave up after ${DEAD_AFTER + 600} s: ${replaced} of ${moved.length} replaced`);
      doneMs = now - t0;
      break;
    }
    await sleep(250);
  }
  const target = (DEAD_AFTER + 10) * 1000;
  report(
    `hollow hosts, failover: ${kill} of ${HOSTS} hosts die at once, ${moved.length} of ${before.length} instances on them, dead_after ${DEAD_AFTER} s`,
    [
      ['dead_after (baseline)', DEAD_AFTER * 1000, 'ms'],
      ['death to all found dead', deadMs ?? Number.NaN, 'ms', (deadMs ?? Number.NaN) / (DEAD_AFTER * 1000)],
      ['death to all running elsewhere', doneMs, 'ms', doneMs / (DEAD_AFTER * 1000)],
      [
        `target dead_after + 10 s = ${target} ms`,
        doneMs <= target ? 1 : 0,
        doneMs <= target ? 'met' : 'NOT met',
      ],
      [`place ${INSTANCES} instances first`, placeMs, 'ms'],
      [`start ${HOSTS} hollow hosts`, cluster.startMs, 'ms'],
      [`enrol ${HOSTS} hosts (POST /v1/nodes)`, cluster.enrolMs, 'ms'],
    ],
  );
} finally {
  await cluster.close();
}
