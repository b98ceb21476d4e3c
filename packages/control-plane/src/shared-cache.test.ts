import { Worker } from 'node:worker_threads';
import { type KeyPair, keyPairFromSecret } from '@heddle/envelope';
import { RevocationList } from '@heddle/package';
import { AllowListPolicy } from '@heddle/protocol';
import { describe, expect, it } from 'vitest';
import { PlaneError } from './errors.js';
import type { PlaceOrderInput } from './order.js';
import { PostgresStateStore, type PostgresStoreOptions } from './pg-store.js';
import type { PlaceResult } from './place.js';
import { type SharedPlane, useSharedPostgres } from './shared-planes.test-util.js';
import type { NodeMetaRecord, SharedStateChange } from './state-store.js';
import { examplePackage, startHost, type TestHost } from './test-fixtures.js';
import { controllerKeys, operatorKeys } from './test-plane.js';

// Two controllers sharing one PostgreSQL state: what one of them writes of the nodes (added, removed,
// cordoned, labelled) and of the revocation list reaches the other's memory (its node book, its live
// engine view, the revocations it checks packages against) through LISTEN/NOTIFY within a bound, and,
// after its notification connection was down, through the re-read made when it is back.

const sp = useSharedPostgres('cache');
const skip = sp.skip;
/** Controller B's key (A has the test plane's usual key). */
const peerKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x92));

/** How long a change may take to reach the other controller here (notification; loaded machine). */
const BOUND_MS = 5_000;

/** The options of B's store in these tests: reconnect soon, no periodic re-read to hide behind. */
const WATCHED: PostgresStoreOptions = { listenRetryMs: 100, listenCheckMs: 500, resyncMs: 0 };

const planeOn = (url: string, keys: KeyPair, store: PostgresStoreOptions = {}): Promise<SharedPlane> =>
  sp.planeOn(url, { keys, store, config: { reconcileTimeoutMs: 3_000, callTimeoutMs: 5_000 } });

/** A WASI host that enrols both controllers' keys. */
async function host(): Promise<TestHost> {
  const h = await startHost(['wasi'], undefined, 0, {
    controllers: new AllowListPolicy({ publicKeys: [controllerKeys.publicKey, peerKeys.publicKey] }),
  });
  sp.track(h);
  return h;
}

/**
 * A TCP proxy to the server that drops every connection (and refuses new ones) while cut. It runs in a
 * worker thread: the store's synchronous calls block this thread, which could not pass their bytes.
 */
async function cutProxy(
  port: number,
): Promise<{ port: number; cut(): void; heal(): void; close(): Promise<void> }> {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const net = require('node:net');
    let pass = true;
    const sockets = new Set();
    const server = net.createServer((client) => {
      sockets.add(client);
      client.on('error', () => {});
      client.on('close', () => sockets.delete(client));
      if (!pass) return client.destroy();
      const up = net.connect(workerData.port, '127.0.0.1');
      sockets.add(up);
      up.on('error', () => {});
      up.on('close', () => { sockets.delete(up); client.destroy(); });
      client.on('close', () => up.destroy());
      client.pipe(up);
      up.pipe(client);
    });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
    parentPort.on('message', (m) => {
      if (m === 'cut') { pass = false; for (const s of sockets) s.destroy(); }
      if (m === 'heal') pass = true;
    });
    `,
    { eval: true, workerData: { port } },
  );
  const listening = await new Promise<number>((resolve) => worker.once('message', resolve));
  return {
    port: listening,
    cut: () => worker.postMessage('cut'),
    heal: () => worker.postMessage('heal'),
    close: async () => {
      await worker.terminate();
    },
  };
}

/** Polls `probe` until it answers something other than undefined, for at most `ms`; answers it and when. */
async function within<T>(ms: number, probe: () => Promise<T | undefined>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return { value, ms: Date.now() - start };
    if (Date.now() - start > ms) throw new Error(`not seen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A WASI order (once, not started) of a fresh package, with `more`. */
async function order(more: Partial<PlaceOrderInput> = {}): Promise<PlaceOrderInput> {
  return {
    package_dir: await examplePackage('wasi-cog', false, true),
    mode: { type: 'once' },
    start: false,
    ...more,
  };
}

/** The place's answer, or the plane error it was refused with. */
async function tryPlace(p: SharedPlane, o: PlaceOrderInput): Promise<PlaceResult | PlaneError> {
  return p.plane.place(o).catch((err: unknown) => {
    if (err instanceof PlaneError) return err;
    throw err;
  });
}

/**
 * Waits until B listens and has taken in the re-read that follows (which reloads its engine view): a
 * view B loads after it changes only by what B is told.
 */
async function heard(b: SharedPlane): Promise<void> {
  await within(BOUND_MS, async () => {
    const s = b.store.sharedStatus();
    return s.listening && s.resyncs >= 1 ? true : undefined;
  });
}

/** Why a place (or dry run) did not place: the refusal's message, or the engine's summary (a dry run). */
function refusal(r: PlaceResult | PlaneError): string | undefined {
  if (r instanceof PlaneError) return r.message;
  return r.status === 'placed' || r.explanation.outcome === 'placed' ? undefined : r.explanation.summary;
}

/** A, then B (B's view loaded from its first dry run), both knowing node `x`; `y` is up but not added. */
async function twoControllers(bOptions: PostgresStoreOptions = WATCHED): Promise<{
  a: SharedPlane;
  b: SharedPlane;
  x: TestHost;
  y: TestHost;
  url: string;
}> {
  const url = await sp.database();
  const x = await host();
  const y = await host();
  const a = await planeOn(url, controllerKeys);
  await a.plane.addNode(x.url, { tier: 'paired' });
  const b = await planeOn(url, peerKeys, bOptions);
  await heard(b);
  await b.plane.refreshNodes();
  const dry = await b.plane.place(await order({ dry_run: true }));
  expect(dry.status).toBe('dry_run');
  return { a, b, x, y, url };
}

describe.skipIf(skip !== undefined)('what one controller writes, the other sees (PostgreSQL)', () => {
  it('a node added through A: B places on it within the bound; removed through A: B forgets it', async () => {
    const { a, b, x, y } = await twoControllers();
    await a.plane.addNode(y.url, { tier: 'paired' });
    const seen = await within(BOUND_MS, async () =>
      b.plane.node(y.service.nodeId).liveness === 'alive' ? true : undefined,
    );
    const placed = await tryPlace(b, await order({ node: y.service.nodeId }));
    expect(placed).toMatchObject({ status: 'placed', instance: { node_id: y.service.nodeId } });
    expect(y.service.instanceIds()).toHaveLength(1);
    expect(seen.ms).toBeLessThan(BOUND_MS);

    // Removed through A (with its placement, --force): B's engine no longer offers it, even preferred.
    await a.plane.removeNode(y.service.nodeId, true);
    const elsewhere = await within(BOUND_MS, async () => {
      const r = await tryPlace(b, await order({ prefer: [y.service.nodeId], dry_run: true }));
      return r instanceof PlaneError || r.explanation.node_id === y.service.nodeId ? undefined : r;
    });
    expect(elsewhere.value.explanation.node_id).toBe(x.service.nodeId);
    const moved = await tryPlace(b, await order({ prefer: [y.service.nodeId] }));
    expect(moved).toMatchObject({ status: 'placed', instance: { node_id: x.service.nodeId } });
    expect(y.service.instanceIds()).toHaveLength(1);
  });

  it('cordoned and labelled through A: B refuses the cordoned node and follows the label', async () => {
    const { a, b, x, y } = await twoControllers();
    await a.plane.addNode(y.url, { tier: 'paired' });
    await within(BOUND_MS, async () =>
      b.plane.node(y.service.nodeId).liveness === 'alive' ? true : undefined,
    );
    await a.plane.cordonNode(x.service.nodeId);
    const refused = await within(BOUND_MS, async () =>
      refusal(await tryPlace(b, await order({ node: x.service.nodeId, dry_run: true }))),
    );
    expect(refused.value).toMatch(/cordoned/);
    expect(refused.ms).toBeLessThan(BOUND_MS);

    await a.plane.labelNode(y.service.nodeId, { set: { room: 'kitchen' } });
    const kitchen = await within(BOUND_MS, async () => {
      const r = await tryPlace(b, await order({ constraints: [{ label: 'room', value: 'kitchen' }] }));
      return r instanceof PlaneError ? undefined : r;
    });
    expect(kitchen.value).toMatchObject({ status: 'placed', instance: { node_id: y.service.nodeId } });
  });

  it('a revocation list pushed through A: B refuses the revoked package and tells its watchers', async () => {
    const { a, b, x } = await twoControllers();
    const o = await order({ node: x.service.nodeId });
    const first = await a.plane.place(o);
    const told: number[] = [];
    b.plane.watchSharedRevocations((_list, generation) => told.push(generation));
    const list = RevocationList.empty().add(
      { kind: 'package', ref: first.instance?.package_id as string, revokedAtMs: Date.now(), reason: 'test' },
      operatorKeys,
    );
    await a.plane.pushRevocations(list.toJSON());
    // B places the same package (another run mode, so another instance): refused, it is revoked.
    const refused = await within(BOUND_MS, async () =>
      refusal(await tryPlace(b, { ...o, mode: { type: 'interval', secs: 60 }, dry_run: true })),
    );
    expect(refused.value).toMatch(/revoked/);
    expect(told).toEqual([1]);
    expect(b.plane.revocationStatus().generation).toBe(1);
  });

  it('writes made while B’s notifications were cut reach it by the re-read once they are back', async () => {
    const url = await sp.database();
    const proxy = await cutProxy(sp.server().port);
    sp.track(proxy);
    const x = await host();
    const a = await planeOn(url, controllerKeys);
    await a.plane.addNode(x.url, { tier: 'paired' });
    const b = await planeOn(url.replace(`:${sp.server().port}/`, `:${proxy.port}/`), peerKeys, WATCHED);
    await heard(b);
    await b.plane.refreshNodes();
    expect(
      (await b.plane.place(await order({ node: x.service.nodeId, dry_run: true }))).explanation.outcome,
    ).toBe('placed'); // B's engine view is loaded: from now on it changes only by what B is told
    const before = b.store.sharedStatus();
    expect(before.connects).toBe(1);

    proxy.cut();
    await within(BOUND_MS, async () => (b.store.sharedStatus().listening ? undefined : true));
    // While B hears nothing: A cordons the node (its notification is not delivered to B).
    await a.plane.cordonNode(x.service.nodeId);
    await new Promise((r) => setTimeout(r, 300));
    expect(b.store.sharedStatus()).toMatchObject({ listening: false, notices: before.notices });
    proxy.heal();
    const refused = await within(BOUND_MS, async () => {
      const r = await tryPlace(b, await order({ node: x.service.nodeId, dry_run: true })).catch(
        () => undefined,
      );
      const why = r === undefined ? undefined : refusal(r);
      return why !== undefined && /cordoned/.test(why) ? why : undefined;
    });
    expect(refused.ms).toBeLessThan(BOUND_MS);
    const after = b.store.sharedStatus();
    expect(after.connects).toBeGreaterThanOrEqual(2);
    expect(after.resyncs).toBeGreaterThan(before.resyncs);
    expect(after.notices).toBe(before.notices);
  });

  it('the database restarted: B listens again and sees the writes made after it', async () => {
    const { a, b, x } = await twoControllers();
    const before = b.store.sharedStatus();
    await sp.server().restart();
    await within(15_000, async () => (b.store.sharedStatus().connects > before.connects ? true : undefined));
    await a.plane.labelNode(x.service.nodeId, { set: { room: 'hall' } });
    const hall = await within(BOUND_MS, async () => {
      const r = await tryPlace(
        b,
        await order({ constraints: [{ label: 'room', value: 'hall' }], dry_run: true }),
      ).catch(() => undefined);
      return r === undefined || r instanceof PlaneError || refusal(r) !== undefined ? undefined : r;
    });
    expect(hall.value.explanation.node_id).toBe(x.service.nodeId);
    expect(b.store.sharedStatus().listening).toBe(true);
  });
});

// The store's announcements themselves, between two bare stores.

const meta = (nodeId: string): NodeMetaRecord => ({
  node_id: nodeId,
  cordoned: true,
  labels: { room: 'hall' },
  updated_at_ms: 1,
});

/** Two stores on a fresh database, each recording what it is told (after its first re-read). */
async function pair(): Promise<{
  a: PostgresStateStore;
  b: PostgresStateStore;
  told: SharedStateChange[][];
}> {
  const url = await sp.database();
  const a = PostgresStateStore.open(url, { resyncMs: 0 });
  const b = PostgresStateStore.open(url, { resyncMs: 0 });
  sp.track(a);
  sp.track(b);
  const told: SharedStateChange[][] = [[], []];
  a.watchShared((c) => told[0]?.push(c));
  b.watchShared((c) => told[1]?.push(c));
  await until(() => told.every((t) => t.some((c) => c.kind === 'resync')));
  told[0] = [];
  told[1] = [];
  return { a, b, told };
}

async function until(ok: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('not seen in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(skip !== undefined)('PostgresStateStore.watchShared (a real PostgreSQL server)', () => {
  it('a committed write is told to the other store, not to the writer; a rolled-back one to nobody', async () => {
    const { a, b, told } = await pair();
    expect(() =>
      a.transaction(() => {
        a.putNodeMeta(meta('n1'));
        throw new Error('no');
      }),
    ).toThrow('no');
    a.transaction(() => a.putNodeMeta(meta('n2')));
    const list = RevocationList.empty().add(
      { kind: 'package', ref: 'ab'.repeat(32), revokedAtMs: Date.now(), reason: 'test' },
      operatorKeys,
    );
    a.putRevocationList({
      name: 'current',
      generation: list.generation,
      list: list.toJSON(),
      stored_at_ms: 1,
    });
    await until(() => (told[1]?.length ?? 0) >= 2);
    await new Promise((r) => setTimeout(r, 200)); // anything else would have arrived by now
    expect(told[1]).toEqual([{ kind: 'meta', node_id: 'n2' }, { kind: 'revocations' }]);
    expect(told[0]).toEqual([]);
    expect(b.getNodeMeta('n1')).toBeUndefined();
    expect(b.sharedStatus()).toMatchObject({ watching: true, listening: true, connects: 1, notices: 2 });
  });

  it('a removal answers whether it removed anything, and is told; many writes at once are one re-read', async () => {
    const { a, b, told } = await pair();
    b.putNodeMeta(meta('n3'));
    await until(() => (told[0]?.length ?? 0) >= 1);
    expect(a.removeNodeMeta('n3')).toBe(true);
    expect(a.removeNodeMeta('n3')).toBe(false);
    await until(() => (told[1]?.length ?? 0) >= 1);
    expect(told[1]?.[0]).toEqual({ kind: 'meta', node_id: 'n3' });
    told[1] = [];
    a.transaction(() => {
      for (let i = 0; i < 100; i++) a.putNodeMeta(meta(`m${i}`));
    });
    await until(() => (told[1]?.length ?? 0) >= 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(told[1]).toEqual([{ kind: 'resync', why: '100 changes at once' }]);
  });

  it('closing the store ends its listener', async () => {
    const { a } = await pair();
    a.close();
    expect(a.sharedStatus()).toMatchObject({ watching: false, listening: false });
  });
});
