import { describe, expect, it, type TestContext } from 'vitest';
import { SeedError } from './errors.js';
import type { SeedApi } from './seed-api.js';
import { SeedClient } from './seed-client.js';
import {
  assertNoToken,
  PINS,
  refusal,
  runtimeTrail,
  type SeedHarness,
  type SeedHarnessOptions,
  seedConfig,
  seedHarness,
  wrapApi,
} from './seed-harness.test-util.js';
import { SeedStrandedInstallError } from './seed-install.js';
import { seedPinWorkload } from './seed-pins.js';
import { DEFAULT_CATALOG, storeCog } from './simulator/sim-types.js';

async function setup(ctx: TestContext, o: SeedHarnessOptions = {}): Promise<SeedHarness> {
  const h = await seedHarness(o);
  ctx.onTestFinished(() => h.close());
  return h;
}

const THERMAL = PINS.find((p) => p.id === 'thermal');
if (THERMAL === undefined) throw new Error('no pin');
const THERM = seedPinWorkload(THERMAL);
const NEWER = [...DEFAULT_CATALOG.filter((c) => c.id !== 'thermal'), storeCog('thermal', '1.1.0')];

/** A client whose install first moves the store on (drift between admission and install). */
function drifting(h: () => SeedHarness, failUninstalls = 0): (api: SeedApi) => SeedApi {
  let fails = failUninstalls;
  return (api) => ({
    url: api.url,
    status: () => api.status(),
    identity: () => api.identity(),
    pairStatus: () => api.pairStatus(),
    openPairWindow: () => api.openPairWindow(),
    pair: (name) => api.pair(name),
    available: () => api.available(),
    installed: () => api.installed(),
    install: (id) => {
      h().sim.setCatalog(NEWER);
      return api.install(id);
    },
    start: (id) => api.start(id),
    stop: (id) => api.stop(id),
    uninstall: (id) => {
      if (fails-- > 0) return Promise.reject(new SeedError('unreachable', 'connection reset (test)'));
      return api.uninstall(id);
    },
    logs: (id, lines) => api.logs(id, lines),
    console: (id, command) => api.console(id, command),
    getConfig: (id) => api.getConfig(id),
    setConfig: (id, config) => api.setConfig(id, config),
    manifest: (id) => api.manifest(id),
    verifyToken: () => api.verifyToken(),
  });
}

describe('SeedApiRuntime installs: read back, undo, reconcile', () => {
  it('undoes an install that put another version than pinned on the Seed, and refuses', async (ctx) => {
    let h: SeedHarness | undefined;
    h = await setup(ctx, { wrap: drifting(() => h as SeedHarness) });
    const e = await refusal(h.host.load(THERM, seedConfig()));
    expect(e.code).toBe('admission');
    expect(e.message).toContain('installed on the Seed at 1.1.0');
    expect(e.message).toContain('the install was undone');
    expect(h.sim.installed()).toEqual([]);
    expect(runtimeTrail(h.chain)).toEqual(['workload.refuse thermal']);
    assertNoToken(h, e);
  });

  it('reports an install it could not undo as stranded, kept only to be unloaded', async (ctx) => {
    let h: SeedHarness | undefined;
    h = await setup(ctx, { wrap: drifting(() => h as SeedHarness, 1) });
    const e = await refusal(h.host.load(THERM, seedConfig()));
    expect(e).toBeInstanceOf(SeedStrandedInstallError);
    expect(e.message).toMatch(/^stranded install: thermal/);
    expect(h.sim.installed()).toMatchObject([{ id: 'thermal', version: '1.1.0', running: false }]);
    const handle = (e as SeedStrandedInstallError).handle;
    expect(handle.storeInstalled).toBe(true);
    expect((await h.runtime.status(handle)).state).toBe('failed');
    expect((await refusal(h.runtime.start(handle))).message).toContain('stranded install');
    // Take it over through the host and unload it: the cog is removed.
    await h.host.adopt(handle, THERM);
    await h.host.unload(handle);
    expect(h.sim.installed()).toEqual([]);
    assertNoToken(h, e);
  });

  it('reconciles an install whose answer was lost (connection destroyed): installed at the pin, carries on', async (ctx) => {
    const h = await setup(ctx);
    h.sim.installWithoutAnswer('destroy');
    const handle = await h.host.load(THERM, seedConfig());
    expect(handle.storeInstalled).toBe(true);
    expect(h.sim.installed()).toMatchObject([{ id: 'thermal', version: '1.0.3', running: false }]);
    await h.host.unload(handle);
    expect(h.sim.installed()).toEqual([]);
  });

  it('reconciles a slow install that timed out on this side', async (ctx) => {
    const h = await setup(ctx, { installTimeoutMs: 300 });
    h.sim.installWithoutAnswer('hang');
    const handle = await h.host.load(THERM, seedConfig());
    expect(handle.storeInstalled).toBe(true);
    expect(h.sim.installed()).toMatchObject([{ id: 'thermal', running: false }]);
  });

  it('a lost answer of an install that put the wrong version is undone', async (ctx) => {
    let h: SeedHarness | undefined;
    h = await setup(ctx, { wrap: drifting(() => h as SeedHarness) });
    h.sim.installWithoutAnswer('destroy');
    const e = await refusal(h.host.load(THERM, seedConfig()));
    expect(e.code).toBe('admission');
    expect(h.sim.installed()).toEqual([]);
  });

  it('refuses an install the Seed refused, with nothing installed', async (ctx) => {
    const h = await setup(ctx);
    h.sim.failNextInstall('flash write failed');
    const e = await refusal(h.host.load(THERM, seedConfig()));
    expect(e.code).toBe('runtime');
    expect(e.message).toContain('flash write failed');
    expect(h.sim.installed()).toEqual([]);
    // The next try works.
    const handle = await h.host.load(THERM, seedConfig());
    expect(handle.storeInstalled).toBe(true);
  });
});

describe('SeedApiRuntime and the documented install answer', () => {
  it('an install answered already_installed (someone installed it since the list was read) is not ours', async (ctx) => {
    let stale = true;
    const h = await seedHarness({
      wrap: (api) =>
        wrapApi(api, {
          // The first read of the installed list predates someone else's install.
          installed: async () => {
            if (stale) {
              stale = false;
              return [];
            }
            return api.installed();
          },
        }),
    });
    ctx.onTestFinished(() => h.close());
    const other = new SeedClient({ url: h.sim.url, token: h.sim.addToken(), allowPlainHttp: true });
    expect(await other.install('thermal')).toBe('installed');
    const handle = await h.host.load(THERM, seedConfig());
    expect(handle.storeInstalled).not.toBe(true);
    expect(h.sim.installed()).toMatchObject([{ id: 'thermal', running: true }]); // not stopped by us
    await h.host.unload(handle);
    expect(h.sim.installed()).toMatchObject([{ id: 'thermal', running: false }]); // stopped, still installed
  });
});
