import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PlaneError } from './errors.js';
import { idempotencyClaimHoldMs, orderFingerprint } from './idempotency.js';
import { parseOrder } from './order.js';
import { type SharedPlane, useSharedPostgres } from './shared-planes.test-util.js';
import { examplePackage, startHost, type TestHost } from './test-fixtures.js';

// Two controller planes sharing one PostgreSQL state. An idempotency key is claimed in the shared
// state before its place is sent, so a retry on the other controller while the first still places is
// refused `idempotency_in_progress` (or answered with the first's order), never placed a second time.
// A place whose controller stopped writing between the send and the answer is settled by the other,
// which does not hold the package, from the order's package facts in the shared state.

const sp = useSharedPostgres('idem');
const skip = sp.skip;
const planeOn = (url: string, now?: () => number): Promise<SharedPlane> =>
  sp.planeOn(url, now === undefined ? {} : { now });

async function host(): Promise<TestHost> {
  const h = await startHost(['wasi']);
  sp.track(h);
  return h;
}

async function rejection(p: Promise<unknown>): Promise<PlaneError | undefined> {
  return p.then(
    () => undefined,
    (err: unknown) => {
      if (err instanceof PlaneError) return err;
      throw err;
    },
  );
}

describe.skipIf(skip !== undefined)('idempotency keys shared by two controllers (PostgreSQL)', () => {
  it('the same key placed on two controllers at once: one instance on the host, the other answer refused in progress or replayed', async () => {
    const url = await sp.database();
    const h = await host();
    const a = await planeOn(url);
    await a.plane.addNode(h.url, { tier: 'paired' });
    const b = await planeOn(url); // opened after the node was added: it reads the node from the shared state
    const order = {
      package_dir: await examplePackage('wasi-cog'),
      start: false,
      idempotency_key: 'shared-1',
    };
    const [ra, rb] = await Promise.allSettled([a.plane.place(order), b.plane.place(order)]);
    const answers = [ra, rb];
    const placed = answers.flatMap((r) =>
      r.status === 'fulfilled' && r.value.replayed !== true ? [r.value] : [],
    );
    expect(placed).toHaveLength(1);
    const firstOrder = placed[0]?.order_id;
    for (const r of answers) {
      if (r.status === 'rejected') {
        expect(r.reason).toBeInstanceOf(PlaneError);
        expect((r.reason as PlaneError).code).toBe('idempotency_in_progress');
        expect((r.reason as PlaneError).field).toBe('idempotency_key');
      } else if (r.value.replayed === true) {
        expect(r.value.order_id).toBe(firstOrder);
      }
    }
    // Counted on the host: one instance, one decision reached it.
    expect(h.service.instanceIds()).toHaveLength(1);
    expect(a.store.listPlacements()).toHaveLength(1);
    // Once settled, a retry on either controller replays the one order.
    for (const p of [a, b]) {
      const again = await p.plane.place(order);
      expect(again).toMatchObject({ status: 'placed', order_id: firstOrder, replayed: true });
    }
    expect(h.service.instanceIds()).toHaveLength(1);
  });

  it('a key another controller claimed and left without a trace: refused while its claim holds, placed afresh once it lapsed', async () => {
    const url = await sp.database();
    const h = await host();
    const a = await planeOn(url);
    await a.plane.addNode(h.url, { tier: 'paired' });
    const order = {
      package_dir: await examplePackage('wasi-cog'),
      start: false,
      idempotency_key: 'orphan-1',
    };
    // A controller that claimed the key, then died before it sent the place anywhere.
    const claim = (claimedAt: number): void =>
      a.store.putIdempotencyKey({
        key: 'orphan-1',
        fingerprint: orderFingerprint(parseOrder(order)),
        order_id: 'o-dead',
        result: null,
        created_at_ms: claimedAt,
        claimed_by: 'dead-controller/0001',
        claimed_at_ms: claimedAt,
      });
    claim(Date.now());
    const refused = await rejection(a.plane.place(order));
    expect(refused?.code).toBe('idempotency_in_progress');
    expect(refused?.message).toContain('dead-controller');
    expect(h.service.instanceIds()).toHaveLength(0);
    // Once its claim has lapsed (claimed longer ago than the hold), the key's order is placed afresh.
    claim(Date.now() - idempotencyClaimHoldMs(a.plane.config) - 1_000);
    const placed = await a.plane.place(order);
    expect(placed).toMatchObject({ status: 'placed', order_id: 'o-dead' });
    expect(placed.replayed).toBeUndefined();
    expect(h.service.instanceIds()).toHaveLength(1);
    expect(a.store.getIdempotencyKey('orphan-1')).toMatchObject({ result: expect.any(String) });
  });
});

describe.skipIf(skip !== undefined)(
  'a place in flight when its controller stopped, settled by another (PostgreSQL)',
  () => {
    it('the other controller, which never held the package, records the instance the host made: one instance, the retry replays it', async () => {
      const url = await sp.database();
      let a: SharedPlane | undefined;
      let cutAt: number | undefined;
      // Controller A stops writing the moment the host has acted on the place and before its answer
      // reaches A (the host tells onCall before it sends the answer): A's store is closed under it.
      const h = await startHost(['wasi'], undefined, 0, {
        onCall: (e) => {
          if (e.method === 'workload.place' && e.outcome === 'ok' && a !== undefined && cutAt === undefined) {
            cutAt = Date.now();
            a.store.close();
          }
        },
      });
      sp.track(h);
      a = await planeOn(url);
      await a.plane.addNode(h.url, { tier: 'paired' });
      const b = await planeOn(url); // its own home: it holds no package
      const order = {
        package_dir: await examplePackage('wasi-cog'),
        start: false,
        idempotency_key: 'inflight-1',
      };
      const failed = await a.plane.place(order).then(
        () => undefined,
        (err: unknown) => err,
      );
      // The fault landed between the send and the answer: the host holds the instance, A's place failed
      // on its closed store, A chained no placed outcome, and the shared state has the decision unsettled.
      expect(cutAt).toBeDefined();
      expect(failed).toBeInstanceOf(Error);
      expect(h.service.instanceIds()).toHaveLength(1);
      const [unsettled, ...more] = b.store.listUnsettled();
      expect(more).toEqual([]);
      if (unsettled === undefined) throw new Error('no unsettled decision in the shared state');
      expect(b.store.listPlacements()).toEqual([]);
      const aChain = readFileSync(a.chainFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes(unsettled.decision_id));
      expect(aChain.some((l) => l.includes('"outcome":"placed"'))).toBe(false);
      // B settles it (as the leader's tick does), from the order's package facts.
      const report = await b.plane.settle();
      expect(report.placed).toEqual([unsettled.decision_id]);
      expect(b.store.listUnsettled()).toEqual([]);
      const placements = b.store.listPlacements();
      expect(placements).toHaveLength(1);
      expect(placements[0]?.instance_id).toBe(h.service.instanceIds()[0]);
      expect(placements[0]?.signer_keys.length).toBeGreaterThan(0);
      expect(readFileSync(b.chainFile, 'utf8')).toContain('"phase":"settled"');
      // The client's retry on B: the order's instance, no second one on the host.
      const again = await b.plane.place(order);
      expect(again).toMatchObject({
        status: 'placed',
        replayed: true,
        instance: { instance_id: placements[0]?.instance_id },
      });
      expect(h.service.instanceIds()).toHaveLength(1);
    });
  },
);
