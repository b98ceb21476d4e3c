// The fabric on a real kernel: namespaces, a bridge, veth pairs, link state and nftables drops, and
// what each fault looks like to TCP from the controller's namespace (silence, never a reset).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fabric, HOST_PORT } from './fabric.js';
import { listLinks, listNamespaces } from './registry.js';
import { Relay } from './relay.js';
import { netnsSkipReason } from './sys.js';

const skip = netnsSkipReason();
if (skip !== undefined) console.warn(`[netns] ${skip}`);

describe.skipIf(skip !== undefined)('namespace fabric', () => {
  let fabric: Fabric;
  let ctl: Relay;
  let host: Relay;
  beforeAll(async () => {
    fabric = await Fabric.create(2);
    [ctl, host] = await Promise.all([Relay.start(fabric.ns('controller')), Relay.start(fabric.ns(0))]);
    await host.serveEcho(fabric.ip(0), HOST_PORT);
  }, 120_000);
  afterAll(async () => {
    await ctl?.close();
    await host?.close();
    fabric?.destroySync();
  });

  const target = (): string => `${fabric.ip(0)}:${HOST_PORT}`;

  it('gives every daemon a namespace and an address of its own, reachable over the bridge', async () => {
    expect(listNamespaces()).toEqual(expect.arrayContaining(fabric.namespaces()));
    expect(listLinks()).toEqual(
      expect.arrayContaining([fabric.bridge, fabric.link('controller'), fabric.link(0)]),
    );
    expect((await ctl.probe(target())).result).toBe('connected');
    // Nothing listens on host 1: a live host answers with a reset at once.
    expect((await ctl.probe(`${fabric.ip(1)}:${HOST_PORT}`)).result).toBe('refused');
  });

  it('finds the processes of each namespace from /proc as ip netns pids does', async () => {
    const scan = fabric.hostPids();
    expect((scan.get(0) ?? []).sort()).toEqual((await fabric.pids(0)).sort());
    expect(scan.get(0)).toContain(host.proc.pid);
    expect(scan.get(1) ?? []).toEqual([]);
  });

  it('a pulled cable makes an open connection silent (no reset), and it survives the cable coming back', async () => {
    expect(await ctl.open('cable', target())).toBe('connected');
    expect((await ctl.ping('cable')).result).toBe('echoed');
    await fabric.linkDown(0);
    try {
      const p = await ctl.ping('cable', 2_000);
      expect(p.result).toBe('timeout');
      expect(p.events).toEqual([]);
      // A new connection gets no answer either (never a reset).
      expect(['timeout', 'unreachable']).toContain((await ctl.probe(target(), 1_500)).result);
    } finally {
      await fabric.linkUp(0);
    }
    const back = await ctl.ping('cable', 10_000);
    expect(back.result).toBe('echoed');
    expect(back.events).toEqual([]);
  }, 60_000);

  it('an input drop is one-way silence: either direction alone stops a TCP connect without a reset', async () => {
    for (const [at, from] of [
      [0, 'controller'],
      ['controller', 0],
    ] as const) {
      await fabric.drop(at, [from]);
      try {
        expect((await ctl.probe(target(), 1_500)).result).toBe('timeout');
      } finally {
        await fabric.undrop(at, [from]);
      }
      expect((await ctl.probe(target())).result).toBe('connected');
    }
  }, 60_000);

  it('drops compose: a drop held by two faults lasts until both lift it', async () => {
    await fabric.drop(0, ['controller']);
    await fabric.drop(0, ['controller']);
    await fabric.undrop(0, ['controller']);
    expect((await ctl.probe(target(), 1_000)).result).toBe('timeout');
    await fabric.undrop(0, ['controller']);
    expect((await ctl.probe(target())).result).toBe('connected');
  }, 30_000);

  it('the relay adds latency in user space', async () => {
    const port = await ctl.listen('lat', '127.0.0.1', 0, target());
    expect(await ctl.open('lat', `127.0.0.1:${port}`)).toBe('connected');
    const fast = await ctl.ping('lat');
    await ctl.mode('lat', { latencyMs: 150, seed: 1 });
    const slow = await ctl.ping('lat', 5_000);
    expect(slow.result).toBe('echoed');
    // Both directions delayed: at least two latencies per round trip.
    expect(slow.ms).toBeGreaterThanOrEqual(290);
    expect(fast.ms).toBeLessThan(slow.ms);
    expect((await ctl.stats('lat')).delayed).toBeGreaterThan(0);
  }, 30_000);
});
