import { describe, expect, it, type TestContext } from 'vitest';
import {
  assertNoToken,
  PINS,
  refusal,
  runtimeTrail,
  type SeedHarness,
  type SeedHarnessOptions,
  seedConfig,
  seedHarness,
} from './seed-harness.test-util.js';
import { seedPinWorkload } from './seed-pins.js';

const pin = (id: string) => {
  const p = PINS.find((x) => x.id === id);
  if (p === undefined) throw new Error(id);
  return p;
};
const AIR = seedPinWorkload(pin('air-quality'));
const VIB = seedPinWorkload(pin('vibration'));
const PRES = seedPinWorkload(pin('presence'));
const THERM = seedPinWorkload(pin('thermal'));

async function setup(ctx: TestContext, o: SeedHarnessOptions = {}): Promise<SeedHarness> {
  const h = await seedHarness(o);
  ctx.onTestFinished(() => h.close());
  return h;
}

const simCog = (h: SeedHarness, id: string) => h.sim.installed().find((c) => c.id === id);

describe('SeedApiRuntime lifecycle through a WorkloadHost against the simulator', () => {
  it('claims the remote.api and cognitum-seed capabilities, managed, plain local link over http', async (ctx) => {
    const h = await setup(ctx);
    const caps = await h.runtime.provides();
    expect(caps.map((c) => [c.id, c.provenance])).toEqual([
      ['runtime.remote.api', 'claimed'],
      ['node.class.cognitum-seed', 'claimed'],
    ]);
    expect(caps[0]?.attrs).toEqual({
      vendor: 'cognitum',
      device: 'seed',
      concurrency_cap: 3,
      arches_native: ['armv7'],
    });
    expect(h.runtime.id).toBe('remote.api');
    expect(h.runtime.route).toBe('remote.api');
    expect(h.runtime.controlMode()).toBe('managed');
    expect(h.runtime.linkSecurity()).toBe('plain_local_link');
    expect(h.runtime.networkExposure()).toBe('egress');
  });

  it('loads by installing and stopping the auto-started cog; start, stop with logs as evidence; unload uninstalls', async (ctx) => {
    const h = await setup(ctx);
    const handle = await h.host.load(AIR, seedConfig({ interval: 20, sensor_source: 'csi' }));
    expect(handle.storeInstalled).toBe(true);
    expect(handle.runtime).toBe('remote.api');
    expect(simCog(h, 'air-quality')).toMatchObject({
      version: '1.2.0',
      running: false,
      config: { interval: 20, sensor_source: 'csi' },
    });
    expect((await h.host.status(handle)).state).toBe('stopped');
    await h.host.start(handle);
    const st = await h.host.status(handle);
    expect(st.state).toBe('running');
    expect(typeof st.pid).toBe('number');
    await new Promise((r) => setTimeout(r, 120));
    const lines = await h.host.logs(handle, 5);
    expect(lines.length).toBeGreaterThan(0);
    const ev = await h.host.stop(handle, 1000);
    expect(ev.stdout).toContain('"reading"');
    expect(ev.stderr).toContain('[cog-air-quality] stop');
    expect(ev.args).toEqual(['air-quality']);
    expect(ev.startedAtMs).not.toBeNull();
    expect(simCog(h, 'air-quality')?.running).toBe(false);
    await h.host.unload(handle);
    expect(simCog(h, 'air-quality')).toBeUndefined();
    expect((await h.runtime.status(handle)).state).toBe('unknown');
    expect(runtimeTrail(h.chain)).toEqual([
      'workload.install air-quality',
      'workload.load air-quality',
      'workload.start air-quality',
      'workload.stop air-quality',
      'workload.unload air-quality',
    ]);
    assertNoToken(h, ev, lines, st);
  });

  it('loading the same request twice returns the same handle and installs once', async (ctx) => {
    const h = await setup(ctx);
    const a = await h.runtime.load(AIR, seedConfig());
    const b = await h.runtime.load(AIR, seedConfig());
    expect(b).toEqual(a);
    expect(h.sim.requests.filter((r) => r.path === '/api/v1/apps/install')).toHaveLength(1);
    const other = await refusal(h.runtime.load(AIR, seedConfig({ interval: 3 })));
    expect(other.code).toBe('runtime');
    expect(other.message).toContain('already loaded');
  });

  it('leaves a cog installed before (by someone else) installed, and stopped, at unload', async (ctx) => {
    const h = await setup(ctx);
    await h.client.install('vibration'); // the Seed auto-starts it
    expect(simCog(h, 'vibration')?.running).toBe(true);
    const handle = await h.host.load(VIB, seedConfig());
    expect(handle.storeInstalled).toBeUndefined();
    expect(h.sim.requests.filter((r) => r.path === '/api/v1/apps/install')).toHaveLength(1);
    await h.host.unload(handle);
    expect(simCog(h, 'vibration')).toMatchObject({ version: '0.4.1', running: false });
    expect(runtimeTrail(h.chain)).toEqual(['workload.load vibration', 'workload.unload vibration']);
  });

  it('refuses to install beyond the concurrency cap (an install auto-starts) and to start beyond it', async (ctx) => {
    const h = await setup(ctx);
    for (const id of ['vibration', 'presence', 'thermal']) await h.client.install(id);
    const refused = await refusal(h.host.load(AIR, seedConfig()));
    expect(refused.code).toBe('admission');
    expect(refused.message).toContain('concurrency cap 3');
    expect(simCog(h, 'air-quality')).toBeUndefined();
    // Make room, load, then fill the cap again: start is refused.
    await h.client.stop('thermal');
    const handle = await h.host.load(AIR, seedConfig());
    await h.client.start('thermal');
    const noStart = await refusal(h.host.start(handle));
    expect(noStart.code).toBe('admission');
    expect(simCog(h, 'air-quality')?.running).toBe(false);
    const kinds = runtimeTrail(h.chain);
    expect(kinds.filter((k) => k.startsWith('workload.refuse'))).toHaveLength(2);
  });

  it('a lower cap set by the operator is honoured', async (ctx) => {
    const h = await setup(ctx, { runtime: { concurrencyCap: 1 } });
    const a = await h.host.load(AIR, seedConfig());
    const t = await h.host.load(THERM, seedConfig());
    await h.host.start(a);
    expect((await refusal(h.host.start(t))).message).toContain('concurrency cap 1');
    expect((await h.runtime.provides())[0]?.attrs.concurrency_cap).toBe(1);
  });

  it('adopts after a restart: re-attaches to the installed pinned cog, keeping who installed it', async (ctx) => {
    const h = await setup(ctx);
    const handle = await h.host.load(PRES, seedConfig());
    await h.host.start(handle);
    const { runtime, host } = h.restart();
    expect((await runtime.status(handle)).state).toBe('unknown');
    await host.adopt(handle, PRES);
    expect((await host.status(handle)).state).toBe('running');
    await host.stop(handle, 1000);
    await host.unload(handle);
    expect(simCog(h, 'presence')).toBeUndefined(); // storeInstalled was true: uninstalled
    // A cog gone from the Seed, or at another version, is not adopted.
    const again = h.restart();
    const gone = await refusal(again.host.adopt(handle, PRES));
    expect(gone.message).toContain('not installed');
    expect(runtimeTrail(h.chain).filter((k) => k.includes('workload.load'))).toHaveLength(2);
  });

  it('refuses an unknown handle and bad config values', async (ctx) => {
    const h = await setup(ctx);
    const ghost = {
      instanceId: 'air-quality-0000000000000000',
      runtime: 'remote.api',
      workloadId: 'air-quality',
      version: '1.2.0',
    };
    expect((await refusal(h.runtime.start(ghost))).code).toBe('unknown_instance');
    const bad = await refusal(h.runtime.load(AIR, seedConfig({ nested: { a: 1 } })));
    expect(bad.code).toBe('invalid_config');
    expect(bad.field).toBe('values.nested');
    expect(simCog(h, 'air-quality')).toBeUndefined();
  });

  it('works over pinned HTTPS (tls_pinned)', async (ctx) => {
    const h = await setup(ctx, { https: true });
    expect(h.runtime.linkSecurity()).toBe('tls_pinned');
    const handle = await h.host.load(THERM, seedConfig());
    await h.host.start(handle);
    const ev = await h.host.stop(handle, 1000);
    expect(ev.stderr).toContain('[cog-thermal] start');
    await h.host.unload(handle);
    expect(h.sim.installed()).toEqual([]);
    assertNoToken(h, ev);
  });
});
