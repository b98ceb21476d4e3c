import { toHex } from '@heddle/envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOrder } from './order.js';
import {
  examplePackage,
  openPlane,
  planeError,
  startHost,
  type TestHost,
  type TestPlane,
} from './test-fixtures.js';

let both: TestHost;
let wasiOnly: TestHost;
let p: TestPlane;
let wasiPkg: string;
let nativePkg: string;

beforeAll(async () => {
  both = await startHost(['native', 'wasi']);
  wasiOnly = await startHost(['wasi']);
  p = await openPlane();
  wasiPkg = await examplePackage('wasi-cog');
  nativePkg = await examplePackage('hello-cog', true);
});
afterAll(async () => {
  await p.close();
  await both.close();
  await wasiOnly.close();
});

describe('learning nodes', () => {
  it('adds nodes by signed describe, trusting the key on first use, with the operator tier', async () => {
    const a = await p.plane.addNode(both.url, { tier: 'paired' });
    expect(a).toMatchObject({
      node_id: both.service.nodeId,
      key_source: 'tofu',
      tier: 'paired',
      routes: ['native', 'wasi'],
      liveness: 'alive',
    });
    expect(a.capabilities).toContain('runtime.native');
    const b = await p.plane.addNode(wasiOnly.url, { tier: 'pinned', key: toHex(wasiOnly.keys.publicKey) });
    expect(b).toMatchObject({ key_source: 'pinned', tier: 'pinned', routes: ['wasi'] });
    expect(b.capabilities).not.toContain('runtime.native');
    expect(
      p.plane
        .nodes()
        .map((n) => n.node_id)
        .sort(),
    ).toEqual([both.service.nodeId, wasiOnly.service.nodeId].sort());
  });

  it('refuses a wrong pinned key, a bad URL and an unreachable node, each with its code', async () => {
    expect((await planeError(p.plane.addNode(both.url, { tier: 'paired', key: 'ab'.repeat(32) }))).code).toBe(
      'key_mismatch',
    );
    expect((await planeError(p.plane.addNode('http://x', { tier: 'paired' }))).field).toBe('url');
    expect((await planeError(p.plane.addNode('ws://127.0.0.1:1/', { tier: 'paired' }))).code).toBe(
      'unreachable',
    );
  });
});

describe('a host that moved', () => {
  it('is not followed to a new port, and is found again when added at its new URL (same record)', async () => {
    const seed = 0x6e;
    const first = await startHost(['wasi'], seed);
    const moved = await openPlane();
    try {
      const added = await moved.plane.addNode(first.url, { tier: 'paired' });
      await first.close();
      // The same key (the same host) comes back on another port: the controller calls the old URL.
      const again = await startHost(['wasi'], seed);
      try {
        expect(again.url).not.toBe(first.url);
        const [stale] = await moved.plane.refreshNodes();
        expect(stale).toMatchObject({ node_id: added.node_id, url: first.url });
        expect(stale?.liveness).not.toBe('alive');
        const readded = await moved.plane.addNode(again.url, { tier: 'paired' });
        expect(readded).toMatchObject({ node_id: added.node_id, url: again.url, liveness: 'alive' });
        expect(moved.plane.nodes()).toHaveLength(1);
        const [fresh] = await moved.plane.refreshNodes();
        expect(fresh).toMatchObject({ url: again.url, liveness: 'alive' });
      } finally {
        await again.close();
      }
    } finally {
      await moved.close();
    }
  });
});

describe('a URL already known as another node', () => {
  it('is refused (node_exists) when another key answers there, naming the known node', async () => {
    const first = await startHost(['wasi'], 0x6f);
    const port = Number(new URL(first.url).port);
    const known = await openPlane();
    try {
      const added = await known.plane.addNode(first.url, { tier: 'paired' });
      await first.close();
      const other = await startHost(['wasi'], 0x70, port); // another machine at the same address
      try {
        const err = await planeError(known.plane.addNode(other.url, { tier: 'paired' }));
        expect(err.code).toBe('node_exists');
        expect(err.field).toBe('url');
        expect(err.message).toContain(`known as node ${added.node_id}`);
        expect(known.plane.nodes()).toHaveLength(1);
      } finally {
        await other.close();
      }
    } finally {
      await known.close();
    }
  });
});

describe('adding nodes stays linear', () => {
  it('adding a node lists no targets (no read of every record per add), and still tells its liveness', async () => {
    const a = await startHost(['wasi']);
    const b = await startHost(['wasi']);
    const lin = await openPlane();
    try {
      await lin.plane.addNode(a.url, { tier: 'paired' });
      const real = lin.store.listTargets.bind(lin.store);
      let lists = 0;
      lin.store.listTargets = () => {
        lists++;
        return real();
      };
      const told: unknown[] = [];
      lin.plane.events.subscribe((e) => {
        if (e.type === 'node.liveness_changed') told.push(e.data);
      });
      const added = await lin.plane.addNode(b.url, { tier: 'paired' });
      expect(lists).toBe(0);
      expect(added.liveness).toBe('alive');
      expect(told).toEqual([{ node_id: added.node_id, from: 'unknown', to: 'alive' }]);
      expect(lin.plane.nodes()).toHaveLength(2);
    } finally {
      await lin.close();
      await a.close();
      await b.close();
    }
  });
});

describe('kept host sessions', () => {
  it('carries every call to a host on one kept session, and reconnects when the host restarts', async () => {
    const host = await startHost(['wasi']);
    const kept = await openPlane();
    try {
      await kept.plane.addNode(host.url, { tier: 'paired' });
      const r = await kept.plane.place({ package_dir: wasiPkg, mode: { type: 'interval', secs: 60 } });
      expect(r.status).toBe('placed');
      await kept.plane.tick();
      const commits = kept.store.groupCommits;
      await kept.plane.refreshNodes();
      // The health round's record updates share group commits (not one fsync per node).
      expect(kept.store.groupCommits).toBeGreaterThan(commits);
      expect(kept.store.getTarget(host.service.nodeId)?.unreachable_since_ms).toBeNull();
      // describe, place, the tick's describe and listing, a refresh: one connection, still open
      // (a connection per call closed each after its answer).
      expect(host.server.sessionCount).toBe(1);
      await host.server.close();
      await host.restart(); // same port: the kept session was closed by the restart
      const [back] = await kept.plane.refreshNodes();
      expect(back?.liveness).toBe('alive');
      const id = r.instance?.instance_id as string;
      expect((await kept.plane.stop(id)).placement.state).toBe('stopped');
      expect(host.server.sessionCount).toBe(1);
    } finally {
      await kept.close();
      await host.close();
    }
  });
});

describe('placing', () => {
  it('a dry run decides and explains without chaining or placing', async () => {
    const before = p.chain.size;
    const r = await p.plane.place({ package_dir: wasiPkg, dry_run: true });
    expect(r.status).toBe('dry_run');
    expect(r.explanation.outcome).toBe('placed');
    expect(p.chain.size).toBe(before);
    expect(p.plane.instances()).toEqual([]);
  });

  it('places a WASI cog, chained decision and attempt; status, logs, stop, unload', async () => {
    const r = await p.plane.place({ package_dir: wasiPkg, mode: { type: 'interval', secs: 60 } });
    expect(r.status).toBe('placed');
    expect(r.attempts).toEqual([expect.objectContaining({ outcome: 'placed' })]);
    const id = r.instance?.instance_id as string;
    const events = p.chain
      .find({ source: 'workload.placement' })
      .map((e) => (e.payload as { phase: string }).phase);
    expect(events).toEqual(expect.arrayContaining(['decision', 'attempt']));
    expect(r.decision_id).toBe(
      p.chain
        .find({ source: 'workload.placement' })
        .find((e) => (e.payload as { phase: string }).phase === 'decision')?.hash,
    );
    const s = await p.plane.status(id);
    expect(s.placement.state).toBe('running');
    let lines: string[] = [];
    for (let i = 0; i < 100 && lines.length === 0; i++) {
      lines = (await p.plane.logs(id)).lines;
      if (lines.length === 0) await new Promise((res) => setTimeout(res, 50));
    }
    expect(lines.join('\n')).toContain('wasi-cog');
    expect((await p.plane.stop(id, 500)).placement.state).toBe('stopped');
    expect((await p.plane.unload(id)).state).toBe('unloaded');
  });

  it('a native cog goes only to the node that advertises a native route', async () => {
    const r = await p.plane.place({ package_dir: nativePkg, start: false });
    expect(r.instance?.node_id).toBe(both.service.nodeId);
    const considered = r.explanation.rows
      .filter((row) => row.verdict !== 'rejected')
      .map((row) => row.node_id);
    expect(considered).toEqual([both.service.nodeId]);
    await p.plane.unload(r.instance?.instance_id as string);
  });

  it('a pin goes only to its node; an unplaceable order names every node’s reason', async () => {
    const pinned = await p.plane.place({ package_dir: wasiPkg, node: wasiOnly.service.nodeId, start: false });
    expect(pinned.instance?.node_id).toBe(wasiOnly.service.nodeId);
    await p.plane.unload(pinned.instance?.instance_id as string);
    const err = await planeError(p.plane.place({ package_dir: nativePkg, node: wasiOnly.service.nodeId }));
    expect(err.code).toBe('unplaceable');
    expect(Object.keys(err.reasons)).toEqual([wasiOnly.service.nodeId]);
    expect(err.reasons[wasiOnly.service.nodeId]).toContain('runtime.native');
  });

  it('refuses an order that does not fit (at the operator boundary, parseOrder), and a package that does not verify, naming the field', async () => {
    const placeParsed = async (input: unknown) => p.plane.place(parseOrder(input));
    expect(
      (await planeError(placeParsed({ package_dir: wasiPkg, mode: { type: 'interval', secs: 0 } }))).field,
    ).toBe('mode.secs');
    expect((await planeError(placeParsed({}))).field).toBe('package_dir');
    const err = await planeError(p.plane.place({ package_dir: '/nonexistent' }));
    expect(err.code).toBe('package_invalid');
  });

  it('when every candidate refuses: one error naming each node, and nothing half-done in the state', async () => {
    const refuse: Parameters<TestHost['intercept']>[0] = (real) => async (signed, ctx) =>
      real(signed, { ...ctx, fetchPackage: async () => Promise.reject(new Error('disk full')) });
    both.intercept(refuse);
    wasiOnly.intercept(refuse);
    try {
      const orders = p.store.listOrders().length;
      const placements = p.plane.instances().length;
      const err = await planeError(
        p.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false }),
      );
      expect(err.code).toBe('refused');
      expect(Object.keys(err.reasons).sort()).toEqual([both.service.nodeId, wasiOnly.service.nodeId].sort());
      expect(Object.values(err.reasons).every((r) => r.includes('disk full'))).toBe(true);
      expect(p.store.listOrders()).toHaveLength(orders);
      expect(p.plane.instances()).toHaveLength(placements);
    } finally {
      both.intercept(undefined);
      wasiOnly.intercept(undefined);
    }
  });

  it('when the winner refuses, the next candidate is tried, and both attempts are chained', async () => {
    both.intercept((real) => async (signed, ctx) => {
      const method = (JSON.parse(signed.payload) as { method: string }).method;
      if (method !== 'workload.place') return real(signed, ctx);
      // The host's fetch fails, so it refuses the place (runtime).
      return real(signed, { ...ctx, fetchPackage: async () => Promise.reject(new Error('disk full')) });
    });
    try {
      const fresh = await examplePackage('wasi-cog');
      const r = await p.plane.place({ package_dir: fresh, prefer: [both.service.nodeId], start: false });
      expect(r.attempts.map((a) => a.outcome)).toEqual(['refused', 'placed']);
      expect(r.attempts[0]).toMatchObject({
        node_id: both.service.nodeId,
        code: 'runtime',
        reason: expect.stringContaining('disk full'),
      });
      expect(r.instance?.node_id).toBe(wasiOnly.service.nodeId);
      expect(p.store.getOrder(r.order_id as string)).toBeDefined();
      await p.plane.unload(r.instance?.instance_id as string);
    } finally {
      both.intercept(undefined);
    }
  });
});
