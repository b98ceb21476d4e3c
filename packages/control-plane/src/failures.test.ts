import { afterEach, describe, expect, it } from 'vitest';
import {
  examplePackage,
  openPlane,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close().catch(() => undefined);
});
async function host(...a: Parameters<typeof startHost>): Promise<TestHost> {
  const h = await startHost(...a);
  open.push(h);
  return h;
}
async function plane(dir?: string, config?: Parameters<typeof openPlane>[1]): Promise<TestPlane> {
  const p = await openPlane(dir, config);
  open.push(p);
  return p;
}
const phases = (p: TestPlane): string[] =>
  p.chain
    .find({ source: 'workload.placement', kind: 'workload.place' })
    .map((e) => (e.payload as { phase: string }).phase);

describe('lost answers (docs/protocol.md, section 11)', () => {
  it('a place whose answer is lost after the host placed it is reconciled: one instance, no retry elsewhere', async () => {
    const a = await host(['wasi']);
    const b = await host(['wasi']);
    const p = await plane();
    await p.plane.addNode(a.url, { tier: 'paired' });
    await p.plane.addNode(b.url, { tier: 'paired' });
    const crash: Parameters<TestHost['intercept']>[0] = (real) => async (signed, ctx) => {
      const answer = await real(signed, ctx);
      if ((JSON.parse(signed.payload) as { method: string }).method !== 'workload.place') return answer;
      throw new Error('crashed after placing, before answering');
    };
    a.intercept(crash);
    b.intercept(crash);
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false });
    expect(r.status).toBe('placed');
    expect(r.attempts).toHaveLength(1);
    expect(r.attempts[0]).toMatchObject({ outcome: 'placed', reason: expect.stringContaining('reconciled') });
    const node = r.instance?.node_id;
    const [winner, other] = node === a.service.nodeId ? [a, b] : [b, a];
    expect(winner.service.instanceIds()).toEqual([r.instance?.instance_id]);
    expect(other.service.instanceIds()).toEqual([]);
    expect(phases(p)).toEqual(['decision', 'attempt', 'reconciled']);
  });

  it('a place the host never acted on is reconciled as nothing once its request expired, then the next candidate is tried', async () => {
    const a = await host(['wasi']);
    const b = await host(['wasi']);
    // A short request lifetime and skew so that "the request can no longer arrive" comes within the test.
    const p = await plane(undefined, { requestTtlMs: 1_000, clockSkewMs: 100, reconcileTimeoutMs: 5_000 });
    await p.plane.addNode(a.url, { tier: 'paired' });
    await p.plane.addNode(b.url, { tier: 'paired' });
    a.intercept((real) => async (signed, ctx) => {
      if ((JSON.parse(signed.payload) as { method: string }).method === 'workload.place') {
        throw new Error('dropped before handling');
      }
      return real(signed, ctx);
    });
    const r = await p.plane.place({
      package_dir: await examplePackage('wasi-cog'),
      start: false,
      prefer: [a.service.nodeId],
    });
    expect(r.attempts.map((x) => [x.node_id, x.outcome])).toEqual([
      [a.service.nodeId, 'indeterminate'],
      [b.service.nodeId, 'placed'],
    ]);
    expect(a.service.instanceIds()).toEqual([]);
    expect(b.service.instanceIds()).toHaveLength(1);
  });

  it('a host that did not act is not tried elsewhere while the request could still arrive: unsettled', async () => {
    const a = await host(['wasi']);
    const b = await host(['wasi']);
    const p = await plane(undefined, { reconcileTimeoutMs: 1_000 });
    await p.plane.addNode(a.url, { tier: 'paired' });
    await p.plane.addNode(b.url, { tier: 'paired' });
    a.intercept((real) => async (signed, ctx) => {
      if ((JSON.parse(signed.payload) as { method: string }).method === 'workload.place') {
        throw new Error('held back');
      }
      return real(signed, ctx);
    });
    const r = await p.plane.place({
      package_dir: await examplePackage('wasi-cog'),
      start: false,
      prefer: [a.service.nodeId],
    });
    expect(r.status).toBe('unsettled');
    expect(r.attempts.map((x) => [x.node_id, x.outcome])).toEqual([[a.service.nodeId, 'unsettled']]);
    expect(b.service.instanceIds()).toEqual([]);
    expect(p.plane.unsettled()[0]?.last_error).toContain('could still arrive');
  });

  it('a place whose node then goes away stays unsettled, persisted, and is settled when the node is back', async () => {
    const a = await host(['wasi']);
    const dir = tempDir();
    let p = await plane(dir);
    await p.plane.addNode(a.url, { tier: 'paired' });
    a.intercept((real) => async (signed, ctx) => {
      const answer = await real(signed, ctx);
      if ((JSON.parse(signed.payload) as { method: string }).method === 'workload.place') {
        void a.server.close();
        throw new Error('the node went away');
      }
      return answer;
    });
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false });
    expect(r.status).toBe('unsettled');
    expect(p.plane.unsettled()).toEqual([
      expect.objectContaining({ decision_id: r.decision_id, node_id: a.service.nodeId }),
    ]);
    expect(p.plane.instances()).toEqual([]);
    // The controller restarts: the unsettled decision is still there.
    await p.close();
    open.splice(open.indexOf(p), 1);
    p = await plane(dir);
    expect(p.plane.unsettled()).toHaveLength(1);
    a.intercept(undefined);
    await a.restart();
    const report = await p.plane.settle();
    expect(report).toEqual({ placed: [r.decision_id], nothing: [], pending: [] });
    expect(p.plane.unsettled()).toEqual([]);
    expect(p.plane.instances().map((i) => i.instance_id)).toEqual(a.service.instanceIds());
  });
});

describe('a controller that dies mid-place', () => {
  it('finds the place it had sent unsettled on disk at the next start, and settles it with the node', async () => {
    const a = await host(['wasi']);
    const dir = tempDir();
    const first = await openPlane(dir, { placeTimeoutMs: 1_500, reconcileTimeoutMs: 500 });
    await first.plane.addNode(a.url, { tier: 'paired' });
    a.intercept((real) => async (signed, ctx) => {
      const answer = await real(signed, ctx);
      if ((JSON.parse(signed.payload) as { method: string }).method !== 'workload.place') return answer;
      return new Promise(() => {}); // placed, and the answer never leaves
    });
    const placing = first.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false });
    for (let i = 0; i < 100 && a.service.instanceIds().length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    const unsettled = first.store.listUnsettled();
    expect(unsettled).toEqual([
      expect.objectContaining({
        node_id: a.service.nodeId,
        last_error: expect.stringContaining('in progress'),
      }),
    ]);
    // The controller "dies": its store and chain close under the place in progress.
    await first.close();
    await placing.catch(() => undefined);
    a.intercept(undefined);
    const second = await openPlane(dir);
    try {
      expect(second.plane.unsettled().map((u) => u.decision_id)).toEqual([unsettled[0]?.decision_id]);
      const report = await second.plane.settle();
      expect(report.placed).toEqual([unsettled[0]?.decision_id]);
      expect(second.plane.instances().map((i) => i.instance_id)).toEqual(a.service.instanceIds());
      expect(second.plane.unsettled()).toEqual([]);
    } finally {
      await second.close();
    }
  });
});

describe('trust bound to the key', () => {
  it('a node answering with another key loses its tier until the operator pins the new key', async () => {
    const first = await host(['wasi'], 0x71);
    const port = Number(new URL(first.url).port);
    const p = await plane();
    const learned = await p.plane.addNode(first.url, { tier: 'paired' });
    await first.server.close();
    const impostor = await host(['wasi'], 0x72, port);
    const after = (await p.plane.refreshNodes()).find((n) => n.node_id === learned.node_id);
    expect(after).toMatchObject({ tier: null, liveness: expect.stringMatching(/suspect|dead|unknown/) });
    expect(after?.pending_key).toBe(Buffer.from(impostor.keys.publicKey).toString('hex'));
    const err = await p.plane
      .place({ package_dir: await examplePackage('wasi-cog') })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unplaceable' });
    const pinned = await p.plane.pinNode(learned.node_id, after?.pending_key as string);
    expect(pinned).toMatchObject({ node_id: impostor.service.nodeId, tier: 'paired', key_source: 'pinned' });
    expect(p.plane.node(learned.node_id).tier).toBeNull();
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false });
    expect(r.instance?.node_id).toBe(impostor.service.nodeId);
  });
});

describe('controller restart', () => {
  it('restores nodes, orders and placements from SQLite', async () => {
    const a = await host(['wasi']);
    const dir = tempDir();
    const p1 = await plane(dir);
    await p1.plane.addNode(a.url, { tier: 'paired' });
    const r = await p1.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false });
    await p1.close();
    open.splice(open.indexOf(p1), 1);
    const p2 = await plane(dir);
    expect(p2.plane.nodes().map((n) => n.node_id)).toEqual([a.service.nodeId]);
    expect(p2.plane.instances()).toEqual([r.instance]);
    const s = await p2.plane.status(r.instance?.instance_id as string);
    expect(s.node).toMatchObject({ instance_id: r.instance?.instance_id, state: 'loaded' });
    expect(p2.chain.verify().ok).toBe(true);
  });
});

describe('removing a node', () => {
  it('rm --force marks its placements lost; the node can be added again at once', async () => {
    const a = await host(['wasi']);
    const p = await plane();
    await p.plane.addNode(a.url, { tier: 'paired' });
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog'), start: false });
    await expect(async () => p.plane.removeNode(a.service.nodeId)).rejects.toMatchObject({
      code: 'invalid_input',
    });
    p.plane.removeNode(a.service.nodeId, true);
    expect(p.plane.instance(r.instance?.instance_id as string).state).toBe('lost');
    const again = await p.plane.addNode(a.url, { tier: 'paired' });
    expect(again).toMatchObject({ node_id: a.service.nodeId, tier: 'paired', instances: 0 });
  });
});
