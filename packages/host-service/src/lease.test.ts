import { keyPairFromSecret } from '@heddle/envelope';
import { hostCogArch } from '@heddle/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { ControllerLease, leaseApplies } from './lease.js';
import {
  flakyPackage,
  lifeOf,
  moves,
  type SupervisedHost,
  startSupervisedHost,
  until,
} from './supervision-fixtures.js';
import { call, controllerKeys, HOST_ID, placeBody, request, strangerKeys, tempDir } from './test-fixtures.js';

/** A second controller of the same fleet (several controllers share one database). */
const controllerB = keyPairFromSecret(new Uint8Array(32).fill(0x46));

const NATIVE = `${hostCogArch() ?? 'x86_64'}-native`;
type Obj = Record<string, unknown>;
const result = async (p: Promise<{ result: unknown }>): Promise<Obj> => (await p).result as Obj;

let host: SupervisedHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function leasedHost(
  leaseMs: number,
  controllers?: readonly Uint8Array[],
): Promise<{ h: SupervisedHost; id: string }> {
  const h = await startSupervisedHost({
    leaseMs,
    supervisor: { intervalMs: 20, backoffInitialMs: 50 },
    ...(controllers === undefined ? {} : { controllers }),
  });
  host = h;
  const pkg = await flakyPackage();
  const body = placeBody(pkg.manifestHash, NATIVE, {
    name: 'flaky-cog',
    start: true,
    mode: { type: 'listener' },
  });
  const placed = await result(call(h.url, request('workload.place', body), { pkgDir: pkg.dir }));
  return { h, id: placed.instance_id as string };
}

const status = async (h: SupervisedHost, id: string): Promise<Obj> =>
  (await result(call(h.url, request('workload.status', { instance_id: id })))).instance as Obj;

describe('ControllerLease', () => {
  it('expires leaseMs after the last time a controller was heard from; time is an input', () => {
    const lease = new ControllerLease(1000, 5000);
    expect(lease.expired(5999)).toBe(false);
    expect(lease.expired(6000)).toBe(true);
    lease.heard(5500);
    expect(lease.expired(6000)).toBe(false);
    lease.heard(5100); // older news changes nothing
    expect(lease.lastHeardMs).toBe(5500);
    expect(() => new ControllerLease(0, 0)).toThrow(/leaseMs/);
  });

  it('a wall clock stepped back does not stretch the lease: it also runs on the monotonic clock', () => {
    let mono = 0;
    const lease = new ControllerLease(1000, 5000, { monotonic: () => mono });
    lease.heard(5500);
    // The wall clock steps back 45 s; 1 s of real (monotonic) time passes.
    mono += 999;
    expect(lease.expired(5500 - 45_000 + 999)).toBe(false);
    mono += 1;
    // Old code: not expired until the wall clock had caught up, 45 s later.
    expect(lease.expired(5500 - 45_000 + 1000)).toBe(true);
    // A renewal backdated to the issue time is backdated on the monotonic clock too.
    lease.heard(40_000, 40_700);
    mono += 299;
    expect(lease.expired(40_999)).toBe(false);
    mono += 1;
    expect(lease.expired(40_999)).toBe(true);
    // A lease resumed from an older start has that much less left.
    const resumed = new ControllerLease(1000, 5000, { nowMs: 5600, monotonic: () => mono });
    mono += 400;
    expect(resumed.expired(5000)).toBe(true);
  });

  it('applies to running continuous instances a controller placed, not to once runs or this node', () => {
    const base = {
      mode: { type: 'listener' as const },
      requester: 'c'.repeat(32),
      desiredRunning: true,
      leaseStopped: false,
      life: { state: 'running' },
    };
    const p = (o: Obj) => ({ ...base, ...o }) as unknown as Parameters<typeof leaseApplies>[0];
    expect(leaseApplies(p({}), HOST_ID)).toBe(true);
    expect(leaseApplies(p({ mode: { type: 'interval', secs: 5 } }), HOST_ID)).toBe(true);
    expect(leaseApplies(p({ mode: { type: 'once' } }), HOST_ID)).toBe(false);
    expect(leaseApplies(p({ requester: HOST_ID }), HOST_ID)).toBe(false);
    expect(leaseApplies(p({ desiredRunning: false }), HOST_ID)).toBe(false);
    expect(leaseApplies(p({ leaseStopped: true }), HOST_ID)).toBe(false);
    expect(leaseApplies(p({ life: { state: 'stopped' } }), HOST_ID)).toBe(false);
  });
});

describe('the controller lease across a host restart', () => {
  it('resumes from when a controller was last heard from, not from the restart', async () => {
    const dataDir = tempDir();
    const first = await startSupervisedHost({ leaseMs: 60_000, dataDir });
    host = first;
    await new Promise((r) => setTimeout(r, 20));
    const issuedAt = Date.now();
    await call(
      first.url,
      request('workload.status', { instance_id: 'a'.repeat(32) }, { now: issuedAt }),
    ).catch(() => undefined);
    expect(first.service.lease?.lastHeardMs).toBe(issuedAt);
    await first.close();
    host = undefined;
    await new Promise((r) => setTimeout(r, 20));
    const restartedAt = Date.now();
    const second = await startSupervisedHost({ leaseMs: 60_000, dataDir });
    host = second;
    // Old code: the lease started afresh at the restart (a host restarted while cut off ran its
    // instances for a whole new lease, past what its controller counted on).
    expect(second.service.lease?.lastHeardMs).toBe(issuedAt);
    expect(second.service.lease?.lastHeardMs).toBeLessThan(restartedAt);
  });

  it('a first start begins the lease then, and remembers it', async () => {
    const dataDir = tempDir();
    const before = Date.now();
    const first = await startSupervisedHost({ leaseMs: 60_000, dataDir });
    host = first;
    const startedAt = first.service.lease?.lastHeardMs ?? 0;
    expect(startedAt).toBeGreaterThanOrEqual(before);
    await first.close();
    host = undefined;
    host = await startSupervisedHost({ leaseMs: 60_000, dataDir });
    expect(host.service.lease?.lastHeardMs).toBe(startedAt);
  });
});

describe('the controller lease on a host (real processes)', () => {
  it('stops a listener when no controller is heard from, flags it, and a start clears the flag', async () => {
    const { h, id } = await leasedHost(1_000);
    const stopped = await until(
      () => lifeOf(h.chain, id),
      (m) => m.some((t) => t.reason === 'lease expired'),
      5_000,
    );
    expect(moves(stopped).slice(4)).toEqual(['loaded->running', 'running->stopped']);
    expect(h.events.map((e) => e.type)).toContain('lease_stopped');
    // Stopped through the WorkloadHost (chained as a stop).
    const stops = h.chain
      .range(0)
      .filter((e) => e.source === 'workload.runtime' && e.kind === 'workload.stop')
      .filter((e) => (e.payload as Obj).instance_id === id);
    expect(stops).toHaveLength(1);
    // The status call renews the lease, but the instance stays stopped: the host never restarts it.
    expect(await status(h, id)).toMatchObject({
      lease_stopped: true,
      desired_running: true,
      life: 'stopped',
      state: 'stopped',
    });
    await new Promise((r) => setTimeout(r, 200));
    expect((await status(h, id)).state).toBe('stopped');
    // The controller's start clears it.
    const started = await result(call(h.url, request('workload.start', { instance_id: id })));
    expect((started.status as Obj).state).toBe('running');
    expect(await status(h, id)).toMatchObject({ lease_stopped: false, life: 'running', state: 'running' });
    expect(lifeOf(h.chain, id).at(-1)?.reason).toBe('started (lease stop cleared)');
    expect(h.errors).toEqual([]);
  }, 20_000);

  it('keeps it running while the controller is heard from in time', async () => {
    // A lease long enough that a slow place cannot use it up; then pings for longer than the lease.
    const { h, id } = await leasedHost(2_000);
    const end = Date.now() + 3_000;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      await status(h, id);
    }
    expect(await status(h, id)).toMatchObject({ lease_stopped: false, life: 'running', state: 'running' });
    expect(h.events.map((e) => e.type)).not.toContain('lease_stopped');
    await result(call(h.url, request('workload.stop', { instance_id: id, grace_ms: 200 })));
    expect(h.errors).toEqual([]);
  }, 20_000);

  it('keeps an instance controller A placed running while only controller B renews the lease', async () => {
    // Several controllers: the host lists both keys; A places, then only B is heard from, for longer
    // than the lease. A call from a key the host does not list is refused and renews nothing.
    const { h, id } = await leasedHost(1_500, [controllerKeys.publicKey, controllerB.publicKey]);
    const asB = (method: 'workload.status' | 'workload.stop', body: Obj) =>
      result(call(h.url, request(method, body as never, { keys: controllerB })));
    const heardBefore = h.service.lease?.lastHeardMs ?? 0;
    await new Promise((r) => setTimeout(r, 50));
    await expect(
      call(h.url, request('workload.status', { instance_id: id }, { keys: strangerKeys })),
    ).rejects.toMatchObject({ code: 'refused', refusal: { code: 'unauthorized' } });
    expect(h.service.lease?.lastHeardMs).toBe(heardBefore);
    const end = Date.now() + 3_500;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      await asB('workload.status', { instance_id: id });
    }
    expect(((await asB('workload.status', { instance_id: id })).instance as Obj).state).toBe('running');
    expect(h.events.map((e) => e.type)).not.toContain('lease_stopped');
    // B may act on what A placed: it stops it.
    await asB('workload.stop', { instance_id: id, grace_ms: 200 });
    expect(((await asB('workload.status', { instance_id: id })).instance as Obj).state).toBe('stopped');
    expect(h.errors).toEqual([]);
  }, 20_000);

  it('stops it when only a controller the host does not list keeps calling', async () => {
    const { h, id } = await leasedHost(1_000, [controllerKeys.publicKey]);
    const stopped = until(
      () => lifeOf(h.chain, id),
      (m) => m.some((t) => t.reason === 'lease expired'),
      5_000,
    );
    const end = Date.now() + 1_500;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      await expect(
        call(h.url, request('workload.status', { instance_id: id }, { keys: controllerB })),
      ).rejects.toMatchObject({ code: 'refused', refusal: { code: 'unauthorized' } });
    }
    expect((await stopped).some((t) => t.reason === 'lease expired')).toBe(true);
  }, 20_000);
});
