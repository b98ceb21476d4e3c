import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { orderFingerprint } from './idempotency.js';
import { parseOrder } from './order.js';
import {
  examplePackage,
  openPlane,
  planeError,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

// Issue 15 item 11: a place sent again with the same idempotency key never makes a second order; the
// key is kept in the state store (a restarted controller still knows it).

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close().catch(() => undefined);
});
async function host(): Promise<TestHost> {
  const h = await startHost(['wasi']);
  open.push(h);
  return h;
}
async function plane(dir?: string, config?: Parameters<typeof openPlane>[1]): Promise<TestPlane> {
  const p = await openPlane(dir, config);
  open.push(p);
  return p;
}
const method = (payload: string): string => (JSON.parse(payload) as { method: string }).method;

describe('idempotency keys of places', () => {
  it('a retry with the same key answers with the first order, also after a restart; another order is refused', async () => {
    const a = await host();
    const dir = tempDir();
    const p = await plane(dir);
    await p.plane.addNode(a.url, { tier: 'paired' });
    const order = {
      package_dir: await examplePackage('wasi-cog'),
      start: false,
      idempotency_key: 'run-42:1',
    };
    const first = await p.plane.place(order);
    expect(first.status).toBe('placed');
    expect(first.replayed).toBeUndefined();
    const again = await p.plane.place(order);
    expect(again).toMatchObject({ status: 'placed', order_id: first.order_id, replayed: true });
    expect(again.instance?.instance_id).toBe(first.instance?.instance_id);
    expect(p.plane.instances()).toHaveLength(1);
    const conflict = await planeError(p.plane.place({ ...order, mode: { type: 'listener' } }));
    expect(conflict.code).toBe('idempotency_conflict');
    expect(conflict.field).toBe('idempotency_key');
    // Without a key, an identical order is another order (refused here: the node holds its instance).
    expect(
      (await planeError(p.plane.place({ ...order, idempotency_key: undefined, node: a.service.nodeId })))
        .code,
    ).toBe('duplicate_instance');
    await p.close();
    open.pop();
    const reopened = await plane(dir);
    const later = await reopened.plane.place(order);
    expect(later).toMatchObject({ status: 'placed', order_id: first.order_id, replayed: true });
    expect(reopened.plane.instances()).toHaveLength(1);
    expect(a.service.instanceIds()).toHaveLength(1);
  });

  it('concurrent places with one key make one order', async () => {
    const a = await host();
    const p = await plane();
    await p.plane.addNode(a.url, { tier: 'paired' });
    const order = { package_dir: await examplePackage('wasi-cog'), start: false, idempotency_key: 'same' };
    const answers = await Promise.all([p.plane.place(order), p.plane.place(order), p.plane.place(order)]);
    expect(new Set(answers.map((r) => r.order_id)).size).toBe(1);
    expect(answers.filter((r) => r.replayed === true)).toHaveLength(2);
    expect(p.plane.instances()).toHaveLength(1);
  });

  it('a lost answer: the retry says unsettled (no second order), then placed once it is settled', async () => {
    const a = await host();
    const b = await host();
    const p = await plane(undefined, { reconcileTimeoutMs: 500 });
    await p.plane.addNode(a.url, { tier: 'paired' });
    await p.plane.addNode(b.url, { tier: 'paired' });
    const lose: Parameters<TestHost['intercept']>[0] = (real) => async (signed, ctx) => {
      const m = method(signed.payload);
      if (m === 'workload.status') throw new Error('cannot answer now');
      const answer = await real(signed, ctx);
      if (m === 'workload.place') throw new Error('crashed after placing, before answering');
      return answer;
    };
    a.intercept(lose);
    b.intercept(lose);
    const order = {
      package_dir: await examplePackage('wasi-cog'),
      start: false,
      idempotency_key: 'retry-me',
    };
    const first = await p.plane.place(order);
    expect(first.status).toBe('unsettled');
    const retry = await p.plane.place(order);
    expect(retry).toMatchObject({ status: 'unsettled', order_id: first.order_id, replayed: true });
    expect(a.service.instanceIds().length + b.service.instanceIds().length).toBe(1);
    a.intercept(undefined);
    b.intercept(undefined);
    expect((await p.plane.settle()).placed).toEqual([first.decision_id]);
    const settled = await p.plane.place(order);
    expect(settled).toMatchObject({ status: 'placed', order_id: first.order_id, replayed: true });
    expect(settled.instance?.instance_id).toBe(p.plane.instances()[0]?.instance_id);
    expect(a.service.instanceIds().length + b.service.instanceIds().length).toBe(1);
  });

  it('a place refused having left nothing forgets its key: the retry tries again', async () => {
    const p = await plane();
    const order = { package_dir: await examplePackage('wasi-cog'), idempotency_key: 'k' };
    expect((await planeError(p.plane.place(order))).code).toBe('unplaceable');
    expect(p.store.getIdempotencyKey('k')).toBeUndefined();
    const a = await host();
    await p.plane.addNode(a.url, { tier: 'paired' });
    expect((await p.plane.place(order)).status).toBe('placed');
    expect(p.store.getIdempotencyKey('k')?.result).toEqual(expect.any(String));
  });

  it('a key an earlier life of this controller claimed and left without a trace (killed before the send) is placed afresh after its restart', async () => {
    const a = await host();
    const before = Date.now();
    const p = await plane();
    await p.plane.addNode(a.url, { tier: 'paired' });
    const order = { package_dir: await examplePackage('wasi-cog'), start: false, idempotency_key: 'died-1' };
    // What a kill -9 between the claim and the send leaves: the key claimed by this controller's id
    // under another process life's token before this life started, no result, no unsettled decision,
    // no placement.
    p.store.putIdempotencyKey({
      key: 'died-1',
      fingerprint: orderFingerprint(parseOrder(order)),
      order_id: 'o-earlier-life',
      result: null,
      created_at_ms: before - 1_000,
      claimed_by: `${p.plane.nodeId}/0123456789abcdef`,
      claimed_at_ms: before - 1_000,
    });
    const placed = await p.plane.place(order);
    expect(placed).toMatchObject({ status: 'placed', order_id: 'o-earlier-life' });
    expect(placed.replayed).toBeUndefined();
    expect(a.service.instanceIds()).toHaveLength(1);
    expect((await p.plane.place(order)).replayed).toBe(true);
    expect(a.service.instanceIds()).toHaveLength(1);
  });

  it('refuses a malformed key naming the field', () => {
    for (const key of ['', 'x'.repeat(129), 'a b', 'ü', 'a/b']) {
      expect(() => parseOrder({ package_dir: 'p', idempotency_key: key })).toThrow(/idempotency_key/);
    }
  });

  it('fingerprints leave the key out and tell orders apart', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 20 }),
        fc.string({ minLength: 1, maxLength: 20 }),
        (x, y) => {
          const one = orderFingerprint({ package_dir: x, idempotency_key: 'a' });
          expect(orderFingerprint({ package_dir: x, idempotency_key: 'b' })).toBe(one);
          if (x !== y) expect(orderFingerprint({ package_dir: y })).not.toBe(one);
        },
      ),
    );
  });
});
