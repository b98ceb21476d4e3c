import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  examplePackage,
  openPlane,
  planeError,
  startHost,
  type TestHost,
  type TestPlane,
} from './test-fixtures.js';

// Issue 15 items 8 and 9: places in flight count in the engine's view (resources and instance ids),
// and each acknowledged order gets its own instance. Real hosts, real concurrency through the plane.

let a: TestHost;
let b: TestHost;
let p: TestPlane;

/** The CPU capacity (percent of one core) a node's signed facts give the engine. */
function cpuCapacity(plane: TestPlane, nodeId: string): number {
  const facts = plane.store.getTarget(nodeId)?.facts;
  const payload = JSON.parse(facts?.payload ?? '{}') as {
    capabilities?: { id: string; attrs?: { cores?: number } }[];
  };
  let cores = 1;
  for (const c of payload.capabilities ?? [])
    if (c.id.startsWith('cpu.arch.')) cores = Math.max(cores, c.attrs?.cores ?? 1);
  return 100 * cores;
}

beforeAll(async () => {
  a = await startHost(['wasi']);
  b = await startHost(['wasi']);
  p = await openPlane();
  await p.plane.addNode(a.url, { tier: 'paired' });
  await p.plane.addNode(b.url, { tier: 'paired' });
});
afterAll(async () => {
  await p.close();
  await a.close();
  await b.close();
});

describe('concurrent places (issue 15 item 9)', () => {
  it('reserve what they take while in flight: no node is overcommitted', async () => {
    const capacity = Math.min(cpuCapacity(p, a.service.nodeId), cpuCapacity(p, b.service.nodeId));
    // Two fit on each node, a third does not.
    const pkg = await examplePackage('wasi-cog', false, false, {
      cpu_pct: Math.floor(capacity * 0.4),
      ram_mb: 4,
    });
    const n = 10;
    const results = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        p.plane.place({ package_dir: pkg, start: false, mode: { type: 'interval', secs: 1_000 + i } }),
      ),
    );
    const placed = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as { code?: string }] : []));
    const perNode = new Map<string, number>();
    for (const r of placed) {
      expect(r.status).toBe('placed');
      const node = r.instance?.node_id as string;
      perNode.set(node, (perNode.get(node) ?? 0) + 1);
    }
    expect([...perNode.values()]).toEqual([2, 2]);
    expect(refused).toHaveLength(n - 4);
    for (const e of refused) expect(e.code).toBe('unplaceable');
    // Nothing stays reserved for the places that failed: unloading frees room for one more.
    const first = placed[0]?.instance?.instance_id as string;
    await p.plane.unload(first);
    const again = await p.plane.place({
      package_dir: pkg,
      start: false,
      mode: { type: 'interval', secs: 2_000 },
    });
    expect(again.instance?.node_id).toBe(placed[0]?.instance?.node_id);
    for (const r of [...placed.slice(1), again]) await p.plane.unload(r.instance?.instance_id as string);
  });
});

describe('identical orders (issue 15 item 8)', () => {
  it('a pinned order whose node holds the identical instance is refused, naming it', async () => {
    const pkg = await examplePackage('wasi-cog');
    const order = {
      package_dir: pkg,
      node: a.service.nodeId,
      start: false,
      mode: { type: 'listener' },
    } as const;
    const first = await p.plane.place(order);
    expect(first.status).toBe('placed');
    const err = await planeError(p.plane.place(order));
    expect(err.code).toBe('duplicate_instance');
    expect(err.field).toBe('node');
    expect(err.message).toContain(first.instance?.instance_id as string);
    expect(err.message).toContain(first.order_id as string);
    // Other config (here another run mode) is another instance: accepted.
    const other = await p.plane.place({ ...order, mode: { type: 'interval', secs: 30 } });
    expect(other.instance?.instance_id).not.toBe(first.instance?.instance_id);
    await p.plane.unload(first.instance?.instance_id as string);
    await p.plane.unload(other.instance?.instance_id as string);
  });

  it('identical unpinned orders, even concurrent, each get their own instance on another node', async () => {
    const pkg = await examplePackage('wasi-cog');
    const order = { package_dir: pkg, start: false, mode: { type: 'listener' } } as const;
    const [one, two] = await Promise.all([p.plane.place(order), p.plane.place(order)]);
    expect(one.status).toBe('placed');
    expect(two.status).toBe('placed');
    expect(one.order_id).not.toBe(two.order_id);
    expect(one.instance?.instance_id).not.toBe(two.instance?.instance_id);
    expect(one.instance?.node_id).not.toBe(two.instance?.node_id);
    const live = p.plane
      .instances()
      .filter((i) => i.state !== 'unloaded')
      .map((i) => i.order_id);
    expect(live).toEqual(expect.arrayContaining([one.order_id, two.order_id]));
    // A third finds every node holding the identical instance: unplaceable, each node's reason given.
    const err = await planeError(p.plane.place(order));
    expect(err.code).toBe('unplaceable');
    expect(Object.keys(err.reasons).sort()).toEqual([a.service.nodeId, b.service.nodeId].sort());
    expect(err.reasons[a.service.nodeId]).toMatch(/identical instance/);
    await p.plane.unload(one.instance?.instance_id as string);
    await p.plane.unload(two.instance?.instance_id as string);
  });
});
