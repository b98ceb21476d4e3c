import { describe, expect, it } from 'vitest';
import { PlaneError } from './errors.js';
import { idempotencyClaimHoldMs } from './idempotency.js';
import { nodeLoadSql } from './node-load.js';
import { PostgresStateStore } from './pg-store.js';
import type { PlaceResult } from './place.js';
import { type SharedPlane, useSharedPostgres } from './shared-planes.test-util.js';
import { exited, lines, spawnStoreChild } from './state-store-contract.test-util.js';
import { examplePackage, startHost, type TestHost } from './test-fixtures.js';

// Capacity shared by several controllers: two control planes, each with its own reservations in
// memory, share one PostgreSQL state and one real host whose advertised memory fits exactly one copy
// of the package. Whatever each engine believes, the claim of a node is checked in one transaction
// against what the shared state holds there, so the node is never overcommitted: the loser moves to
// another node or is refused `unplaceable`, naming the node's lack of room.

const sp = useSharedPostgres('cap');
const skip = sp.skip;
const planeOn = (url: string): Promise<SharedPlane> => sp.planeOn(url);

async function host(): Promise<TestHost> {
  const h = await startHost(['wasi']);
  sp.track(h);
  return h;
}

/** The `mem.system` size (MB) node `nodeId` advertises in its signed facts, as the shared state holds them. */
function advertisedMemoryMb(store: PostgresStateStore, nodeId: string): number {
  const facts = store.getTarget(nodeId)?.facts;
  if (facts === null || facts === undefined) throw new Error(`no facts of ${nodeId}`);
  // cast: signed node facts are JSON with a capability list (verified when the node was described)
  const payload = JSON.parse(facts.payload) as {
    capabilities: { id: string; attrs?: { size_mb?: number } }[];
  };
  const mb = payload.capabilities.find((c) => c.id === 'mem.system')?.attrs?.size_mb;
  if (typeof mb !== 'number' || mb < 2) throw new Error(`node ${nodeId} advertises no usable mem.system`);
  return mb;
}

/** Packages (each its own package id, so their instances differ) needing more than half of `memoryMb`. */
async function bigPackages(memoryMb: number, n: number): Promise<string[]> {
  const ram = Math.floor(memoryMb / 2) + 1;
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    out.push(await examplePackage('wasi-cog', false, false, { cpu_pct: 5, ram_mb: ram }));
  return out;
}

/** Settles both places; returns the placed results and the refusals. */
async function both(places: readonly Promise<PlaceResult>[]): Promise<{
  placed: PlaceResult[];
  refused: PlaneError[];
}> {
  const settled = await Promise.allSettled(places);
  const placed: PlaceResult[] = [];
  const refused: PlaneError[] = [];
  for (const r of settled) {
    if (r.status === 'fulfilled') placed.push(r.value);
    else if (r.reason instanceof PlaneError) refused.push(r.reason);
    else throw r.reason;
  }
  return { placed, refused };
}

/** The refusal of a place onto `nodeId`, which the shared state found without room. */
function expectNoRoom(err: PlaneError | undefined, nodeId: string): void {
  expect(err).toBeInstanceOf(PlaneError);
  expect(err?.code).toBe('unplaceable');
  expect(err?.message).toContain('no room in the shared state');
  const why = err?.reasons?.[nodeId];
  expect(why).toMatch(/^needs \d+ MB, -?\d+ MB free of \d+ MB \(\d+ MB held in the shared state by /);
}

describe.skipIf(skip !== undefined)('capacity shared by two controllers (PostgreSQL)', () => {
  for (const first of ['a', 'b'] as const) {
    it(`two controllers place onto one node that fits one copy at once (${first} starts first): one instance on the host, the other refused for lack of room`, async () => {
      const url = await sp.database();
      const h = await host();
      const a = await planeOn(url);
      const node = await a.plane.addNode(h.url, { tier: 'paired' });
      const b = await planeOn(url); // reads the node from the shared state
      await b.plane.refreshNodes(); // and hears from it
      const [pa, pb] = await bigPackages(advertisedMemoryMb(a.store, node.node_id), 2);
      const placeA = () => a.plane.place({ package_dir: pa ?? '', start: false });
      const placeB = () => b.plane.place({ package_dir: pb ?? '', start: false });
      const places = first === 'a' ? [placeA(), placeB()] : [placeB(), placeA()];
      const { placed, refused } = await both(places);
      expect(placed).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expectNoRoom(refused[0], node.node_id);
      // Counted on the host itself: one instance.
      expect(h.service.instanceIds()).toHaveLength(1);
      expect(a.store.listPlacements().filter((p) => p.node_id === node.node_id)).toHaveLength(1);
      // Nothing is left claimed or unsettled.
      expect(a.store.listPlaceClaims()).toEqual([]);
      expect(a.store.listUnsettled()).toEqual([]);
    });
  }

  it('one controller placed; the other, whose reservations never saw it, is refused for lack of room, not sent to the host', async () => {
    const url = await sp.database();
    const h = await host();
    const a = await planeOn(url);
    const node = await a.plane.addNode(h.url, { tier: 'paired' });
    const b = await planeOn(url);
    await b.plane.refreshNodes();
    const [pa, pb] = await bigPackages(advertisedMemoryMb(a.store, node.node_id), 2);
    const done = await a.plane.place({ package_dir: pa ?? '', start: false });
    expect(done.status).toBe('placed');
    const err = await b.plane.place({ package_dir: pb ?? '', start: false }).then(
      () => undefined,
      (e: unknown) => (e instanceof PlaneError ? e : undefined),
    );
    expectNoRoom(err, node.node_id);
    expect(h.service.instanceIds()).toHaveLength(1);
    // The placement carries its resources in the shared state: what B's check counted.
    expect(a.store.getPlacement(done.instance?.instance_id ?? '')).toMatchObject({
      ram_mb: Math.floor(advertisedMemoryMb(a.store, node.node_id) / 2) + 1,
      cpu_pct: 5,
    });
  });

  it('with a second node, the loser lands on the second node: one instance on each host, no refused attempt', async () => {
    const url = await sp.database();
    const h1 = await host();
    const h2 = await host();
    const a = await planeOn(url);
    const n1 = await a.plane.addNode(h1.url, { tier: 'paired' });
    const n2 = await a.plane.addNode(h2.url, { tier: 'paired' });
    const b = await planeOn(url);
    await b.plane.refreshNodes();
    const memory = Math.max(advertisedMemoryMb(a.store, n1.node_id), advertisedMemoryMb(a.store, n2.node_id));
    const [pa, pb] = await bigPackages(memory, 2);
    const { placed, refused } = await both([
      a.plane.place({ package_dir: pa ?? '', start: false }),
      b.plane.place({ package_dir: pb ?? '', start: false }),
    ]);
    expect(refused).toEqual([]);
    expect(placed).toHaveLength(2);
    expect(new Set(placed.map((p) => p.instance?.node_id))).toEqual(new Set([n1.node_id, n2.node_id]));
    // Each decision went straight to a node with room: one attempt each, both placed.
    for (const p of placed) expect(p.attempts.map((x) => x.outcome)).toEqual(['placed']);
    expect(h1.service.instanceIds()).toHaveLength(1);
    expect(h2.service.instanceIds()).toHaveLength(1);
  });

  it('a claim of a dead controller holds the node only until the hold lapses; its unsettled decision holds it until settled', async () => {
    const url = await sp.database();
    const h = await host();
    const a = await planeOn(url);
    const node = await a.plane.addNode(h.url, { tier: 'paired' });
    const memory = advertisedMemoryMb(a.store, node.node_id);
    const [pkg] = await bigPackages(memory, 1);
    const ram = Math.floor(memory / 2) + 1;
    const hold = idempotencyClaimHoldMs(a.plane.config);
    // A controller that claimed the node for a place, then died before sending it.
    const deadClaim = (claimedAt: number): void =>
      a.store.putPlaceClaim({
        claim_id: 'pc-dead',
        node_id: node.node_id,
        order_id: 'o-dead',
        instance_id: 'i-dead',
        ram_mb: ram,
        cpu_pct: 5,
        claimed_by: 'dead-controller',
        claimed_at_ms: claimedAt,
      });
    const attempt = () =>
      a.plane.place({ package_dir: pkg ?? '', start: false }).then(
        (r) => r,
        (e: unknown) => (e instanceof PlaneError ? e : Promise.reject(e)),
      );
    deadClaim(Date.now() - hold + 60_000); // within the hold
    const held = await attempt();
    expect(held).toBeInstanceOf(PlaneError);
    expectNoRoom(held instanceof PlaneError ? held : undefined, node.node_id);
    expect((held as PlaneError).reasons?.[node.node_id]).toContain('1 claim(s)');
    // Pinned to that node: not replaced, refused the same way.
    const pinned = await a.plane.place({ package_dir: pkg ?? '', start: false, node: node.node_id }).then(
      () => undefined,
      (e: unknown) => (e instanceof PlaneError ? e : undefined),
    );
    expectNoRoom(pinned, node.node_id);
    expect(pinned?.message).toContain(`pinned node ${node.node_id} has no room in the shared state`);
    expect(h.service.instanceIds()).toHaveLength(0);

    // Its answer lost: an unsettled decision holds the room however old, until it is settled.
    a.store.removePlaceClaim('pc-dead');
    a.store.putUnsettled({
      decision_id: 'd'.repeat(64),
      order_id: 'o-dead',
      node_id: node.node_id,
      expected_instance_id: 'i-dead',
      variant: 'wasm32-wasi',
      since_ms: Date.now() - 10 * hold,
      attempts: 3,
      last_error: 'lost',
      ram_mb: ram,
      cpu_pct: 5,
    });
    const unsettled = await attempt();
    expectNoRoom(unsettled instanceof PlaneError ? unsettled : undefined, node.node_id);
    expect((unsettled as PlaneError).reasons?.[node.node_id]).toContain('1 unsettled place(s)');
    a.store.removeUnsettled('d'.repeat(64)); // settled: nothing was placed

    // A claim older than the hold is ignored, and removed by the next claim of that node.
    deadClaim(Date.now() - hold - 1_000);
    const placed = await attempt();
    expect(placed).toMatchObject({ status: 'placed' });
    expect(h.service.instanceIds()).toHaveLength(1);
    expect(a.store.getPlaceClaim('pc-dead')).toBeUndefined();
    expect(a.store.listPlaceClaims()).toEqual([]);
  });
});

describe.skipIf(skip !== undefined)('claims of one node from two processes at once (PostgreSQL)', () => {
  it('two processes claim one node in a loop, released together: the claims never exceed its capacity', async () => {
    const url = await sp.database();
    PostgresStateStore.open(url).close(); // migrated once, before the race
    const capacityModule = new URL('./shared-capacity.ts', import.meta.url).pathname;
    const child = (tag: string) =>
      spawnStoreChild(
        {
          fresh: () => url,
          open: () => {
            throw new Error('unused');
          },
          raw: () => undefined,
          child: {
            module: new URL('./pg-store.ts', import.meta.url).pathname,
            exportName: 'PostgresStateStore',
            openExpr: (u) => `PostgresStateStore.open(${JSON.stringify(u)})`,
          },
        },
        `
        const { claimRoom } = await import(${JSON.stringify(capacityModule)});
        const s = PostgresStateStore.open(${JSON.stringify(url)});
        // The window between the read of the node's load and the claim's write is widened (25 ms),
        // so the two processes' transactions overlap: only their serialisation keeps the node's room.
        const slow = new Proxy(s, { get(t, k) {
          if (k === 'nodeLoad') return (...a) => {
            const load = t.nodeLoad(...a);
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
            return load;
          };
          const v = t[k];
          return typeof v === 'function' ? v.bind(t) : v;
        } });
        const ctx = { store: slow, now: () => Date.now(), nodeId: 'ctl-${tag}',
          config: { placeTimeoutMs: 60000, requestTtlMs: 60000, clockSkewMs: 0 } };
        console.log('ready');
        await new Promise((r) => process.stdin.once('data', r));
        let won = 0, full = 0, conflicts = 0;
        for (let i = 0; i < 15; i++) {
          try {
            const why = claimRoom(ctx, 'pc-${tag}-' + i, { node_id: 'n1', instance_id: 'i-${tag}-' + i },
              { order_id: 'o-${tag}-' + i, memoryMb: 10, cpuPct: 1 }, { memory_mb: 100, cpu_capacity: 100000 });
            if (why === undefined) won++; else full++;
          } catch (e) {
            if (e.code !== 'store_conflict') throw e;
            conflicts++;
          }
        }
        console.log('done ' + won + ' ' + full + ' ' + conflicts);
        s.close();
        process.exit(0);`,
      );
    const kids = [child('a'), child('b')];
    const outs = kids.map((k) => lines(k));
    for (const o of outs) expect(await o.first).toBe('ready');
    for (const k of kids) k.stdin?.write('go\n');
    await Promise.all(kids.map((k) => exited(k)));
    const done = outs.map((o) => o.out.find((l) => l.startsWith('done ')));
    for (const [i, d] of done.entries()) expect(d, outs[i]?.err()).toBeDefined();
    const won = done.reduce((n, d) => n + Number(d?.split(' ')[1]), 0);
    const s = PostgresStateStore.open(url);
    try {
      // Exactly the node's room was claimed (100 MB, 10 MB each), by the two processes together.
      expect(s.listPlaceClaims()).toHaveLength(10);
      expect(won).toBe(10);
      expect(s.nodeLoad('n1', 0)).toMatchObject({ ram_mb: 100, claims: 10 });
    } finally {
      s.close();
    }
  }, 60_000);
});

describe.skipIf(skip !== undefined)('the node load query on PostgreSQL', () => {
  it('reads one node through the node_id indexes once the tables hold a fleet (the query plan)', async () => {
    const url = await sp.database();
    const s = PostgresStateStore.open(url);
    try {
      // 500 nodes, 20 placements, 4 unsettled decisions and 4 claims each.
      s.query(`INSERT INTO placements (instance_id, node_id, order_id, decision_id, workload, version, variant,
        runtime, manifest_hash, package_id, signer_keys, artifact_hashes, state, desired_running, placed_at_ms,
        updated_at_ms, ram_mb, cpu_pct)
        SELECT 'i-' || g, 'n' || (g % 500), 'o-' || g, 'd', 'w', '1', 'v', 'wasi', 'm', 'p', '[]', '[]',
          'running', true, g, g, 1, 1 FROM generate_series(1, 10000) g`);
      s.query(`INSERT INTO unsettled (decision_id, order_id, node_id, expected_instance_id, variant, since_ms,
        attempts, last_error, ram_mb, cpu_pct)
        SELECT 'd-' || g, 'o', 'n' || (g % 500), NULL, 'v', g, 0, 'x', 1, 1 FROM generate_series(1, 2000) g`);
      s.query(`INSERT INTO place_claims (claim_id, node_id, order_id, instance_id, ram_mb, cpu_pct, claimed_by,
        claimed_at_ms) SELECT 'pc-' || g, 'n' || (g % 500), 'o', 'i', 1, 1, 'c', g FROM generate_series(1, 2000) g`);
      s.query('ANALYZE placements');
      s.query('ANALYZE unsettled');
      s.query('ANALYZE place_claims');
      const plan = s
        .query(`EXPLAIN ${nodeLoadSql('$1', '$2')}`, ['n7', 0])
        .rows.map((r) => String(r['QUERY PLAN']))
        .join('\n');
      expect(plan).toMatch(
        /Index (Only )?Scan using placements_by_node on placements|Bitmap Index Scan on placements_by_node/,
      );
      expect(plan).toMatch(
        /Index (Only )?Scan using unsettled_by_node on unsettled|Bitmap Index Scan on unsettled_by_node/,
      );
      expect(plan).toMatch(
        /Index (Only )?Scan using place_claims_by_node on place_claims|Bitmap Index Scan on place_claims_by_node/,
      );
      expect(plan).not.toMatch(/Seq Scan/);
      expect(s.nodeLoad('n7', 0)).toEqual({
        ram_mb: 28,
        cpu_pct: 28,
        placements: 20,
        unsettled: 4,
        claims: 4,
        stale_claims: 0,
      });
    } finally {
      s.close();
    }
  });
});
