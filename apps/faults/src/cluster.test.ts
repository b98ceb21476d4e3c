// The harness itself, against real daemons: a cluster starts, places through the API, is read back
// from the hosts directly, survives kill -9 and restart of its daemons on the same homes, verifies
// its chains, and tears down without leaving a process behind (native workloads included).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from './cluster.js';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await Cluster.start({ hosts: 2 });
}, 120_000);

afterAll(async () => {
  await cluster?.teardown();
});

/** True while `pid` runs (a zombie waiting to be reaped does not count). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

describe('Cluster', () => {
  it('starts a controller and two hosts, added under their own keys', async () => {
    const nodes = await cluster.nodes();
    expect(nodes.map((n) => n.node_id).sort()).toEqual(cluster.hosts.map((h) => h.nodeId).sort());
    expect((await cluster.api().health()).controller).toBe(cluster.controllerId);
  });

  it('places a native cog; the host lists it; its process runs detached and survives kill -9 of its host', async () => {
    const pkg = cluster.packages.native;
    if (pkg === undefined) throw new Error('no native package');
    const node = cluster.hosts[0]?.nodeId;
    const placed = await cluster.api().place({
      package_dir: pkg.dir,
      mode: { type: 'interval', secs: 3_000 },
      ...(node === undefined ? {} : { node }),
    });
    expect(placed.status).toBe('placed');
    const listing = await cluster.listing(0);
    expect(listing.instances.map((i) => i.instance_id)).toEqual([placed.instance?.instance_id]);
    const pids = cluster.nativePids(0);
    expect(pids).toHaveLength(1);
    await cluster.killHost(0);
    expect(alive(pids[0] as number)).toBe(true);
    await cluster.startHost(0);
    expect((await cluster.verifyChains()).filter((c) => !c.ok)).toEqual([]);
  }, 60_000);

  it('restarts the controller on the same home (the API moves to a new port)', async () => {
    const before = (await cluster.api().instances()).length;
    await cluster.restartController();
    expect((await cluster.api().instances()).length).toBe(before);
  }, 60_000);

  it('teardown kills every daemon and every native workload', async () => {
    const pids = [0, 1].flatMap((i) => cluster.nativePids(i));
    const daemons = cluster.started.map((d) => d.proc.pid as number);
    await cluster.teardown();
    for (const pid of [...pids, ...daemons]) expect(alive(pid), `pid ${pid}`).toBe(false);
  }, 30_000);
});
