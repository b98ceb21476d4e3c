import { createServer } from 'node:net';
import { nodeIdFromPublicKey } from '@heddle/envelope';
import { CallFailure } from '@heddle/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { WireClient } from './client.js';
import { WireSession } from './client-session.js';
import { WireServer } from './server.js';
import { controller, host, hostHandler, selfSignedCert, signed, stranger } from './test-fixtures.js';

const servers: WireServer[] = [];
async function start(options: Partial<Parameters<typeof WireServer.listen>[0]> = {}): Promise<WireServer> {
  const s = await WireServer.listen({ handler: hostHandler(), ...options });
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function failure(p: Promise<unknown>): Promise<CallFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CallFailure);
  return err as CallFailure;
}

describe('signed calls over WebSocket', () => {
  it('round-trips a signed request, verified on both sides', async () => {
    const server = await start();
    const client = new WireClient();
    const res = await client.call(server.url, signed('workload.status', { hello: 'world' }), {
      expectedPublicKey: host.publicKey,
    });
    expect(res.result).toEqual({ hello: 'world' });
    expect(res.response.responder).toBe(nodeIdFromPublicKey(host.publicKey));
    expect(res.response.outcome.status).toBe('ok');
  });

  it('stopAccepting: new connections are refused while an open call finishes', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const server = await start({
      handler: hostHandler(async (body) => {
        await gate;
        return body;
      }),
    });
    const url = server.url;
    const session = await WireSession.connect(url);
    const pending = session.call(signed('workload.status', { slow: true }), {
      expectedPublicKey: host.publicKey,
    });
    await new Promise((r) => setTimeout(r, 50));
    server.stopAccepting();
    expect(server.accepting).toBe(false);
    expect(server.url).toBe(url);
    const refused = await failure(WireSession.connect(url));
    expect(refused.code).toBe('unreachable');
    release();
    expect((await pending).result).toEqual({ slow: true });
    await session.close();
  });

  it('carries many concurrent calls on one session', async () => {
    const server = await start();
    const session = await WireSession.connect(server.url);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => session.call(signed('workload.status', { i }))),
    );
    expect(results.map((r) => r.result)).toEqual(Array.from({ length: 8 }, (_, i) => ({ i })));
    await session.close();
  });

  it('an unauthorised controller gets one signed refusal (Refused) and is disconnected', async () => {
    const server = await start();
    const session = await WireSession.connect(server.url);
    const err = await failure(session.call(signed('workload.status', {}, stranger)));
    expect(err.code).toBe('refused');
    expect(err.refusal?.code).toBe('unauthorized');
    await new Promise((r) => setTimeout(r, 50));
    expect(session.isOpen).toBe(false);
  });

  it('a refused request on a session that already carried a verified call leaves it open for the others', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const server = await start({
      handler: hostHandler(async (body) => {
        await gate;
        return body;
      }),
    });
    const session = await WireSession.connect(server.url);
    const first = signed('workload.status', { n: 1 });
    const open = session.call(first); // verified, held by the host
    await new Promise((r) => setTimeout(r, 50));
    const err = await failure(session.call(signed('workload.status', {}, stranger)));
    expect(err.refusal?.code).toBe('unauthorized');
    release();
    expect((await open).result).toEqual({ n: 1 });
    expect(session.isOpen).toBe(true);
    expect((await session.call(signed('workload.place', { n: 2 }))).result).toEqual({ n: 2 });
    await session.close();
  });

  it('an unauthenticated refusal of a mutating call is Indeterminate', async () => {
    const server = await start();
    const err = await failure(new WireClient().call(server.url, signed('workload.stop', {}, stranger)));
    expect(err.code).toBe('indeterminate');
    expect(err.refusal?.code).toBe('unauthorized');
  });

  it('a replayed request is refused by the host (replay)', async () => {
    const server = await start();
    const s = signed('workload.status');
    await new WireClient().call(server.url, s);
    const err = await failure(new WireClient().call(server.url, s));
    expect(err.refusal?.code).toBe('replay');
  });

  it('a transport method differing from the signed one is refused, bound to the header method', async () => {
    const server = await start();
    const err = await failure(
      new WireClient().call(server.url, signed('workload.status'), { method: 'workload.logs' }),
    );
    // The host signs an invalid_request refusal for "workload.logs"; it does not answer the signed method.
    expect(err.code).toBe('unreachable');
    expect(err.message).toContain('method_mismatch');
  });

  it('a response signed by another key than the expected one is Indeterminate for a mutating call', async () => {
    const server = await start();
    const err = await failure(
      new WireClient().call(server.url, signed('workload.start'), {
        expectedPublicKey: controller.publicKey,
      }),
    );
    expect(err.code).toBe('indeterminate');
    expect(err.message).toContain('key_mismatch');
  });

  it('a host that never answers: Indeterminate for a mutating call, Unreachable for a read', async () => {
    const server = await start({ handler: () => new Promise(() => {}) });
    const client = new WireClient();
    const a = await failure(client.call(server.url, signed('workload.place'), { timeoutMs: 200 }));
    expect(a.code).toBe('indeterminate');
    const b = await failure(client.call(server.url, signed('workload.status'), { timeoutMs: 200 }));
    expect(b.code).toBe('unreachable');
  });

  it('nothing listening: Unreachable, even for a mutating call', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((r) => probe.close(() => r()));
    const err = await failure(new WireClient().call(`ws://127.0.0.1:${port}/`, signed('workload.place')));
    expect(err.code).toBe('unreachable');
  });

  it('a handler failure closes the call: Indeterminate for a mutating call', async () => {
    const errors: unknown[] = [];
    const server = await start({
      handler: async () => {
        throw new Error('boom');
      },
      onError: (e) => errors.push(e),
    });
    const err = await failure(new WireClient().call(server.url, signed('workload.unload')));
    expect(err.code).toBe('indeterminate');
    expect(errors).toHaveLength(1);
  });

  const tls = selfSignedCert();
  it.skipIf(tls === undefined)('serves wss:// with an operator certificate', async () => {
    if (tls === undefined) return;
    const server = await start({ tls });
    expect(server.url.startsWith('wss://')).toBe(true);
    const res = await new WireClient({ ca: tls.cert }).call(
      server.url,
      signed('workload.status', { tls: true }),
    );
    expect(res.result).toEqual({ tls: true });
    const err = await failure(new WireClient().call(server.url, signed('workload.status')));
    expect(err.code).toBe('unreachable'); // an untrusted certificate: never sent
  });
});
