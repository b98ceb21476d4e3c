import { cpSync } from 'node:fs';
import { parsePolicy } from '@heddle/gate';
import { RevocationList } from '@heddle/package';
import { type CtlOutcome, type CtlRequest, type SignedCtl, verifyResponse } from '@heddle/protocol';
import { hostCogArch } from '@heddle/runtime';
import { WireSession } from '@heddle/wire';
import { afterEach, describe, expect, it } from 'vitest';
import type { HostCallContext } from './host-service.js';
import {
  type BuiltPackage,
  buildPackage,
  call,
  helloPackage,
  helloSource,
  hostKeys,
  operatorKeys,
  placeBody,
  request,
  startHost,
  strangerKeys,
  type TestHost,
  wasiPackage,
} from './test-fixtures.js';

const NATIVE = `${hostCogArch() ?? 'x86_64'}-native`;
const hosts: TestHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
});
async function host(options: Parameters<typeof startHost>[0] = {}): Promise<TestHost> {
  const h = await startHost(options);
  hosts.push(h);
  return h;
}

/** A call context whose fetch copies `pkg` after `delayMs` (an in-process stand-in for the wire). */
function ctx(method: string, pkg?: BuiltPackage, delayMs = 0): HostCallContext & { closed: boolean } {
  const c = {
    method,
    closed: false,
    closeAfterReply: () => {
      c.closed = true;
    },
    fetchPackage: async (_hash: string, dest: string) => {
      await new Promise((r) => setTimeout(r, delayMs));
      if (pkg === undefined) throw new Error('nothing to fetch');
      cpSync(pkg.dir, dest, { recursive: true });
      return dest;
    },
  };
  return c;
}

function outcome(signed: SignedCtl, req: SignedCtl): CtlOutcome {
  const r = JSON.parse(req.payload) as Pick<
    CtlRequest,
    'method' | 'nonce' | 'expires_at_ms' | 'issued_at_ms'
  >;
  const now = Math.min(Date.now(), r.issued_at_ms);
  return verifyResponse(signed, { request: r, expectedPublicKey: hostKeys.publicKey, now }).response.outcome;
}

describe('unauthenticated requests', () => {
  it('get one signed refusal, the connection is closed, and their chaining is budgeted', async () => {
    const h = await host({ refusalBudget: { perWindow: 3, windowMs: 60_000 } });
    const from = h.chain.size;
    for (let i = 0; i < 10; i++) {
      const req = request('workload.status', {}, { keys: strangerKeys });
      const c = ctx('workload.status');
      const o = outcome(await h.service.handle(req, c), req);
      expect(o).toMatchObject({ status: 'refused', code: 'unauthorized', authenticated: false });
      expect(c.closed).toBe(true);
    }
    const chained = h.chain.range(from).filter((e) => e.kind === 'workload.refuse');
    expect(chained).toHaveLength(3);
    expect(chained.map((e) => (e.payload as { phase: string }).phase)).toEqual([
      'verify',
      'verify',
      'verify',
    ]);
    const expired = request('workload.status', {}, { now: Date.now() - 400_000, ttlMs: 1000 });
    const o = outcome(await h.service.handle(expired, ctx('workload.status')), expired);
    expect(o).toMatchObject({ code: 'expired' });
  });

  it('the suppressed count is carried on the next chained refusal', async () => {
    const h = await host({ refusalBudget: { perWindow: 1, windowMs: 200 } });
    const from = h.chain.size;
    for (let i = 0; i < 5; i++) {
      const req = request('workload.status', {}, { keys: strangerKeys });
      await h.service.handle(req, ctx('workload.status'));
    }
    await new Promise((r) => setTimeout(r, 250));
    const req = request('workload.status', {}, { keys: strangerKeys });
    await h.service.handle(req, ctx('workload.status'));
    const chained = h.chain.range(from).filter((e) => e.kind === 'workload.refuse');
    expect(chained.map((e) => (e.payload as { suppressed: number }).suppressed)).toEqual([0, 4]);
  });

  it('over the wire: the refusal arrives, then the host closes the connection', async () => {
    const h = await host();
    const session = await WireSession.connect(h.url);
    await expect(session.call(request('workload.status', {}, { keys: strangerKeys }))).rejects.toMatchObject({
      code: 'refused',
      refusal: { code: 'unauthorized' },
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(session.isOpen).toBe(false);
  });
});

describe('in flight, races and rollbacks', () => {
  it('a place being handled is listed in flight by decision id', async () => {
    const h = await host();
    const pkg = await buildPackage(helloSource());
    const req = request('workload.place', placeBody(pkg.manifestHash, NATIVE));
    const pending = h.service.handle(req, ctx('workload.place', pkg, 400));
    await new Promise((r) => setTimeout(r, 100));
    const status = (await call(h.url, request('workload.status', {}))).result as {
      in_flight: { decision_id: string }[];
    };
    const decisionId = (JSON.parse(req.payload) as { decision_id: string }).decision_id;
    expect(status.in_flight.map((d) => d.decision_id)).toEqual([decisionId]);
    expect(outcome(await pending, req)).toMatchObject({ status: 'ok' });
    const after = (await call(h.url, request('workload.status', {}))).result as { in_flight: unknown[] };
    expect(after.in_flight).toEqual([]);
  });

  it('a place that raced a revocation is torn down and refused with governance', async () => {
    const wasi = await wasiPackage();
    let h: TestHost | undefined;
    h = await host({
      afterWasiLoad: () => {
        const list = RevocationList.empty().add(
          { kind: 'artifact', ref: artifact, revokedAtMs: Date.now(), reason: 'race' },
          operatorKeys,
        );
        h?.holder.replace(list);
      },
    });
    const { readEnvelopeBytes, parseEnvelope } = await import('@heddle/package');
    const artifact = parseEnvelope(readEnvelopeBytes(wasi.dir)).files[0]?.blake3 as string;
    const req = request('workload.place', placeBody(wasi.manifestHash, 'wasm32-wasi', { start: true }));
    const o = outcome(await h.service.handle(req, ctx('workload.place', wasi)), req);
    expect(o).toMatchObject({ status: 'refused', code: 'governance', authenticated: true });
    expect((o as { reason: string }).reason).toContain('revoked while it was being placed');
    expect(h.service.instanceIds()).toEqual([]);
    const status = (await call(h.url, request('workload.status', { include_departed: true }))).result;
    expect(status).toMatchObject({ departed: [{ reason: 'revoked' }] });
  });

  it('a start the gate denies unloads the instance it loaded and says so', async () => {
    const policy = parsePolicy({
      version: 1,
      name: 'no-start',
      rules: [
        {
          id: 'load-only',
          effect: 'permit',
          actions: ['workload.load', 'workload.unload', 'workload.stop'],
          kinds: ['cog'],
          max_network: 'egress',
        },
      ],
    });
    const h = await host({ policy });
    const pkg = await helloPackage();
    const req = request('workload.place', placeBody(pkg.manifestHash, NATIVE, { start: true }));
    const o = outcome(await h.service.handle(req, ctx('workload.place', pkg)), req);
    expect(o).toMatchObject({ status: 'refused', code: 'governance' });
    expect((o as { reason: string }).reason).toMatch(
      /start failed: .*loaded instance hello-cog-[0-9a-f]{16} unloaded/,
    );
    expect(h.service.instanceIds()).toEqual([]);
  });
});

describe('shutdown', () => {
  it('stops running instances, leaves them loaded, and refuses new work', async () => {
    const h = await host();
    const pkg = await helloPackage();
    const placed = await call(
      h.url,
      request(
        'workload.place',
        placeBody(pkg.manifestHash, NATIVE, { start: true, mode: { type: 'interval', secs: 1 } }),
      ),
      { pkgDir: pkg.dir },
    );
    const id = (placed.result as { instance_id: string }).instance_id;
    const result = await h.service.shutdown(2000);
    expect(result).toEqual({ stopped: [id], failed: [] });
    const req = request('workload.status', { instance_id: id });
    const o = outcome(await h.service.handle(req, ctx('workload.status')), req);
    expect(o).toMatchObject({
      status: 'refused',
      code: 'runtime',
      reason: expect.stringContaining('shutting down'),
    });
    expect(h.service.instanceIds()).toEqual([id]);
    const stop = h.chain
      .range(0)
      .filter((e) => e.kind === 'workload.stop' && e.source === 'workload.runtime');
    expect(stop).toHaveLength(1);
  });
});

describe('halt', () => {
  it('stops as a power loss would: nothing stopped or written, and new work refused', async () => {
    const h = await host();
    const pkg = await helloPackage();
    const placed = await call(
      h.url,
      request(
        'workload.place',
        placeBody(pkg.manifestHash, NATIVE, { start: true, mode: { type: 'interval', secs: 1 } }),
      ),
      { pkgDir: pkg.dir },
    );
    const id = (placed.result as { instance_id: string }).instance_id;
    const events = h.chain.range(0).length;
    await h.service.halt();
    await h.service.halt(); // idempotent
    const req = request('workload.status', { instance_id: id });
    const o = outcome(await h.service.handle(req, ctx('workload.status')), req);
    expect(o).toMatchObject({ status: 'refused', code: 'runtime' });
    // Nothing was drained: the instance was not stopped (no stop chained) and is still held.
    expect(h.service.instanceIds()).toEqual([id]);
    expect(h.chain.range(0).filter((e) => e.kind === 'workload.stop')).toHaveLength(0);
    // The one event since the halt is the chained refusal.
    expect(h.chain.range(0).length).toBe(events + 1);
    await expect(h.service.shutdown(100)).rejects.toMatchObject({ code: 'shutting_down' });
  });
});
