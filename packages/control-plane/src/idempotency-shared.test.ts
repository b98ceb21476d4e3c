import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { Gate } from '@heddle/gate';
import { NO_REVOCATIONS } from '@heddle/package';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlane } from './control-plane.js';
import { PlaneError } from './errors.js';
import { idempotencyClaimHoldMs, orderFingerprint } from './idempotency.js';
import { parseOrder } from './order.js';
import { PostgresStateStore } from './pg-store.js';
import { examplePackage, startHost, type TestHost } from './test-fixtures.js';
import { controllerKeys, OPEN_POLICY, tempDir, testAnchors } from './test-plane.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from './test-postgres.js';

// Two controller planes sharing one PostgreSQL state: an idempotency key is claimed in the shared
// state before its place is sent, so a retry on the other controller while the first still places is
// refused `idempotency_in_progress` (or answered with the first's order), never placed a second time.

const skip = postgresSkipReason();
let pg: TestPostgres | undefined;
let dbs = 0;
beforeAll(async () => {
  if (skip === undefined) pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close().catch(() => undefined);
});

interface SharedPlane {
  readonly plane: ControlPlane;
  readonly store: PostgresStateStore;
}

/** A control plane of its own (directory, chain) on the shared PostgreSQL database `url`. */
async function planeOn(url: string, now?: () => number): Promise<SharedPlane> {
  const dir = tempDir();
  const store = PostgresStateStore.open(url);
  const chain = await openChainFile(join(dir, 'chain.jsonl'));
  const plane = new ControlPlane({
    keys: controllerKeys,
    store,
    chain,
    gate: new Gate({ policy: OPEN_POLICY, recorder: chain }),
    anchors: testAnchors(),
    revocations: NO_REVOCATIONS,
    stateDir: dir,
    config: { reconcileTimeoutMs: 3_000, callTimeoutMs: 5_000, placeTimeoutMs: 20_000 },
    ...(now === undefined ? {} : { now }),
  });
  open.push({
    close: async () => {
      store.close();
      await chain.close();
    },
  });
  return { plane, store };
}

async function host(): Promise<TestHost> {
  const h = await startHost(['wasi']);
  open.push(h);
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
    if (pg === undefined) throw new Error('no test server');
    const url = await pg.createDatabase(`idem_${dbs++}`);
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
    if (pg === undefined) throw new Error('no test server');
    const url = await pg.createDatabase(`idem_${dbs++}`);
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
