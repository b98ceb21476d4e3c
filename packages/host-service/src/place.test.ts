import { verifyNodeFacts } from '@heddle/placement';
import { hostCogArch } from '@heddle/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BuiltPackage,
  call,
  HOST_ID,
  helloPackage,
  placeBody,
  request,
  startHost,
  type TestHost,
  trail,
  wasiPackage,
} from './test-fixtures.js';

const NATIVE = `${hostCogArch() ?? 'x86_64'}-native`;
let host: TestHost;
let pkg: BuiltPackage;
let wasi: BuiltPackage;

beforeAll(async () => {
  host = await startHost();
  pkg = await helloPackage();
  wasi = await wasiPackage();
});
afterAll(async () => {
  await host.close();
});

type Obj = Record<string, unknown>;
const result = async (p: Promise<{ result: unknown }>): Promise<Obj> => (await p).result as Obj;

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('describe', () => {
  it('answers fresh signed facts of this node and the workload-host advertisement', async () => {
    const r = await result(call(host.url, request('workload.describe')));
    const facts = verifyNodeFacts(r.facts);
    expect(facts.facts.node_id).toBe(HOST_ID);
    const ids = facts.facts.capabilities.map((c) => c.id);
    expect(ids).toContain('runtime.wasi');
    expect(ids.some((id) => id.startsWith('cpu.arch.'))).toBe(true);
    expect(r.advertisement).toMatchObject({
      service: 'workload-host',
      node_id: HOST_ID,
      routes: ['native', 'wasi'],
      limits: { max_calls_per_session: 8 },
    });
  });
});

describe('place through the wire', () => {
  it('fetches, verifies, loads and starts a WASI cog; logs, status, unload; chained', async () => {
    const from = host.chain.size;
    const placed = await result(
      call(
        host.url,
        request('workload.place', placeBody(wasi.manifestHash, 'wasm32-wasi', { start: true })),
        {
          pkgDir: wasi.dir,
        },
      ),
    );
    expect(placed).toMatchObject({
      workload: 'wasi-cog',
      route: 'wasi',
      started: true,
      already_placed: false,
      node: HOST_ID,
    });
    const id = placed.instance_id as string;
    expect(id).toMatch(/^wasi-cog-[0-9a-f]{16}$/);
    const status = await until(
      () => result(call(host.url, request('workload.status', { instance_id: id }))),
      (s) => (s.instance as Obj).state === 'exited',
    );
    expect(status.instance).toMatchObject({ state: 'exited' });
    const logs = await result(call(host.url, request('workload.logs', { instance_id: id })));
    expect((logs.lines as string[]).join('\n')).toContain('"cog":"wasi-cog"');
    const listing = await result(call(host.url, request('workload.status', {})));
    expect((listing.instances as Obj[]).map((i) => i.instance_id)).toContain(id);
    expect(listing.in_flight).toEqual([]);
    await result(call(host.url, request('workload.unload', { instance_id: id })));
    const after = await result(call(host.url, request('workload.status', { include_departed: true })));
    expect((after.instances as Obj[]).map((i) => i.instance_id)).not.toContain(id);
    expect(after.departed).toEqual([expect.objectContaining({ instance_id: id, reason: 'unloaded' })]);
    const events = trail(host.chain, from);
    expect(events).toEqual(
      expect.arrayContaining([
        'workload.host artifact.fetch',
        'workload.runtime workload.load',
        'workload.runtime workload.start',
        'workload.host workload.place',
        'workload.runtime workload.unload',
      ]),
    );
    expect(events.indexOf('workload.host artifact.fetch')).toBeLessThan(
      events.indexOf('workload.runtime workload.load'),
    );
    expect(host.chain.verify().ok).toBe(true);
  });

  it('places a native cog in interval mode, stops it with evidence, and re-places idempotently', async () => {
    const body = placeBody(pkg.manifestHash, NATIVE, { start: true, mode: { type: 'interval', secs: 1 } });
    const first = await result(call(host.url, request('workload.place', body), { pkgDir: pkg.dir }));
    expect(first).toMatchObject({ route: 'native', started: true, desired_running: true });
    const id = first.instance_id as string;
    const again = await result(call(host.url, request('workload.place', body), { pkgDir: pkg.dir }));
    expect(again).toMatchObject({ instance_id: id, already_placed: true, started: false });
    expect(host.service.instanceIds().filter((i) => i === id)).toHaveLength(1);
    const stopped = await result(
      call(host.url, request('workload.stop', { instance_id: id, grace_ms: 1000 })),
    );
    expect(stopped.instance_id).toBe(id);
    expect((stopped.evidence as Obj).stdout).toContain('hello');
    const status = await result(call(host.url, request('workload.status', { instance_id: id })));
    expect(status.instance).toMatchObject({ desired_running: false, state: 'stopped' });
    const restarted = await result(call(host.url, request('workload.start', { instance_id: id })));
    expect((restarted.status as Obj).state).toBe('running');
    await call(host.url, request('workload.stop', { instance_id: id, grace_ms: 500 }));
    await call(host.url, request('workload.unload', { instance_id: id }));
  });

  it('a load loads without starting; the held package is not fetched again', async () => {
    const body = placeBody(pkg.manifestHash, NATIVE, { values: { greeting: 'hey' } });
    const loaded = await result(call(host.url, request('workload.load', body), { pkgDir: pkg.dir }));
    expect(loaded).toMatchObject({ started: false, state: 'loaded' });
    const other = placeBody(pkg.manifestHash, NATIVE, { values: { greeting: 'yo' } });
    const from = host.chain.size;
    const second = await result(call(host.url, request('workload.load', other)));
    expect(second.instance_id).not.toBe(loaded.instance_id);
    expect(trail(host.chain, from)).not.toContain('workload.host artifact.fetch');
    for (const id of [loaded.instance_id, second.instance_id]) {
      await call(host.url, request('workload.unload', { instance_id: id as string }));
    }
  });
});
