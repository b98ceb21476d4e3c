import { CallFailure } from '@heddle/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { WireServer } from './server.js';
import { WireSessionPool } from './session-pool.js';
import { host, hostHandler, signed } from './test-fixtures.js';

const servers: WireServer[] = [];
const pools: WireSessionPool[] = [];
async function start(options: Partial<Parameters<typeof WireServer.listen>[0]> = {}): Promise<WireServer> {
  const s = await WireServer.listen({ handler: hostHandler(), ...options });
  servers.push(s);
  return s;
}
function pool(options: ConstructorParameters<typeof WireSessionPool>[0] = {}): WireSessionPool {
  const p = new WireSessionPool(options);
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(10);
  }
}

/** A handler whose `hold` calls wait until released, telling when one arrived. */
function gated(): {
  handler: ReturnType<typeof hostHandler>;
  entered: Promise<void>;
  release: () => void;
} {
  let release: () => void = () => {};
  let entered: () => void = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const arrived = new Promise<void>((r) => {
    entered = r;
  });
  const handler = hostHandler(async (body) => {
    if (typeof body === 'object' && body !== null && !Array.isArray(body) && body.hold === true) {
      entered();
      await gate;
    }
    return body;
  });
  return { handler, entered: arrived, release };
}

describe('WireSessionPool', () => {
  it('carries every call to one host on one kept connection, each signed on its own', async () => {
    const server = await start();
    const p = pool();
    for (let i = 0; i < 5; i++) {
      const r = await p.call(server.url, signed('workload.status', { i }), {
        expectedPublicKey: host.publicKey,
      });
      expect(r.result).toEqual({ i });
    }
    const many = await Promise.all(
      Array.from({ length: 8 }, (_, i) => p.call(server.url, signed('workload.status', { i }))),
    );
    expect(many.map((r) => r.result)).toEqual(Array.from({ length: 8 }, (_, i) => ({ i })));
    expect(p.connects).toBe(1);
    expect(server.sessionCount).toBe(1);
    // The host's replay protection still applies per request on the kept session.
    const once = signed('workload.status', { once: true });
    await p.call(server.url, once);
    const replay = await p.call(server.url, once).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(replay).toBeInstanceOf(CallFailure);
    expect((replay as CallFailure).code).toBe('refused');
  });

  it('a call beyond the session call limit gets a connection of its own; the host never closes with 4003', async () => {
    const g = gated();
    const server = await start({ handler: g.handler, maxCallsPerSession: 2 });
    const p = pool({ maxCallsPerSession: 2 });
    const calls = Array.from({ length: 4 }, (_, i) =>
      p.call(server.url, signed('workload.status', { i, hold: true })),
    );
    await g.entered;
    await until(() => server.sessionCount === 3);
    g.release();
    const results = await Promise.all(calls);
    expect(results.map((r) => r.result)).toEqual(Array.from({ length: 4 }, (_, i) => ({ i, hold: true })));
    expect(p.connects).toBe(3); // the kept one and two of their own
    await until(() => server.sessionCount === 1);
  });

  it('reconnects after the host restarts (same port), without losing the call', async () => {
    const first = await start();
    const { port } = first.address;
    const p = pool();
    await p.call(first.url, signed('workload.place', {}));
    await first.close();
    servers.splice(servers.indexOf(first), 1);
    const again = await start({ port });
    expect(again.url).toBe(first.url);
    // The kept session is closed; the call is sent on a new connection, not failed as indeterminate.
    const r = await p.call(again.url, signed('workload.place', { n: 2 }));
    expect(r.result).toEqual({ n: 2 });
    expect(p.connects).toBe(2);
  });

  it('a host that came back on a new port is reached at its new URL; the old session is closed', async () => {
    const first = await start();
    const p = pool();
    await p.call(first.url, signed('workload.status', {}));
    await first.close();
    const moved = await start();
    expect(moved.url).not.toBe(first.url);
    const old = await p.call(first.url, signed('workload.status', {})).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((old as CallFailure).code).toBe('unreachable');
    expect((await p.call(moved.url, signed('workload.place', { n: 3 }))).result).toEqual({ n: 3 });
    expect(p.size).toBe(1);
  });

  it('a session the host closed while idle is replaced before the next call is sent', async () => {
    const server = await start({ idleTimeoutMs: 150 });
    const p = pool();
    await p.call(server.url, signed('workload.status', {}));
    await until(() => server.sessionCount === 0);
    await sleep(20);
    const r = await p.call(server.url, signed('workload.place', { ok: 1 }));
    expect(r.result).toEqual({ ok: 1 });
    expect(p.connects).toBe(2);
  });

  it('a mutating call cut mid-call on a reused session is Indeterminate, and the next call reconnects', async () => {
    const g = gated();
    const server = await start({ handler: g.handler });
    const { port } = server.address;
    const p = pool();
    await p.call(server.url, signed('workload.status', {}));
    const cut = p.call(server.url, signed('workload.place', { hold: true })).then(
      () => undefined,
      (e: unknown) => e,
    );
    await g.entered; // the host has the request: the cut lands between its arrival and its answer
    expect(p.connects).toBe(1); // on the reused session
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const failure = await cut;
    expect(failure).toBeInstanceOf(CallFailure);
    expect((failure as CallFailure).code).toBe('indeterminate');
    g.release();
    const again = await start({ port });
    expect((await p.call(again.url, signed('workload.place', { n: 4 }))).result).toEqual({ n: 4 });
    expect(p.connects).toBe(2);
  });

  it('a read-only call cut mid-call is Unreachable (lost, but changed nothing)', async () => {
    const g = gated();
    const server = await start({ handler: g.handler });
    const p = pool();
    await p.call(server.url, signed('workload.status', {}));
    const cut = p.call(server.url, signed('workload.status', { hold: true })).then(
      () => undefined,
      (e: unknown) => e,
    );
    await g.entered;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    expect(((await cut) as CallFailure).code).toBe('unreachable');
    g.release();
  });

  it('a call with no answer in time retires its session: the next call uses a new connection', async () => {
    const g = gated();
    const server = await start({ handler: g.handler });
    const p = pool();
    await p.call(server.url, signed('workload.status', {}));
    const late = await p.call(server.url, signed('workload.stop', { hold: true }), { timeoutMs: 100 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((late as CallFailure).code).toBe('indeterminate');
    expect((await p.call(server.url, signed('workload.status', { n: 5 }))).result).toEqual({ n: 5 });
    expect(p.connects).toBe(2);
    g.release();
    await until(() => server.sessionCount === 1);
  });

  it('closes sessions unused for idleMs, and keeps at most maxSessions (least recently used closed first)', async () => {
    const a = await start();
    const b = await start();
    const c = await start();
    const p = pool({ maxSessions: 2, idleMs: 300 });
    await p.call(a.url, signed('workload.status', {}));
    await p.call(b.url, signed('workload.status', {}));
    await p.call(a.url, signed('workload.status', {})); // b is now the least recently used
    await p.call(c.url, signed('workload.status', {}));
    expect(p.size).toBe(2);
    await until(() => b.sessionCount === 0);
    expect(a.sessionCount).toBe(1);
    expect(c.sessionCount).toBe(1);
    await until(() => a.sessionCount === 0 && c.sessionCount === 0);
    expect(p.size).toBe(0);
  });

  it('a closed pool sends nothing', async () => {
    const server = await start();
    const p = pool();
    await p.close();
    const err = await p.call(server.url, signed('workload.place', {})).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as CallFailure).code).toBe('unreachable');
  });
});
