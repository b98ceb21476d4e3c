import { workloadFromStorePin } from '@heddle/runtime';
import { describe, expect, it, type TestContext } from 'vitest';
import { SeedClient } from './seed-client.js';
import {
  assertNoToken,
  PINS,
  refusal,
  runtimeTrail,
  type SeedHarness,
  seedConfig,
  seedHarness,
} from './seed-harness.test-util.js';
import type { SeedApiFailure } from './seed-instance.js';
import { SEED_REGISTRY, seedPinWorkload } from './seed-pins.js';
import { SeedApiRuntime } from './seed-runtime.js';
import { DEFAULT_CATALOG, storeCog } from './simulator/sim-types.js';

async function setup(ctx: TestContext): Promise<SeedHarness> {
  const h = await seedHarness();
  ctx.onTestFinished(() => h.close());
  return h;
}

const AIR_PIN = PINS[0];
if (AIR_PIN === undefined) throw new Error('no pin');
const AIR = seedPinWorkload(AIR_PIN);

describe('SeedApiRuntime admission: only what the operator pinned, exactly as the store lists it', () => {
  it('admits a pinned cog the store lists at the pinned version and sha256', async (ctx) => {
    const h = await setup(ctx);
    const a = await h.runtime.admit(AIR);
    expect(a).toMatchObject({ runtime: 'remote.api', arch: 'armv7', emulated: false });
    expect(a.variant).toBe('cognitum-seed/air-quality@1.2.0');
  });

  it('refuses a cog the operator did not pin (unknown id, other version, other registry), nothing installed', async (ctx) => {
    const h = await setup(ctx);
    const cases = [
      workloadFromStorePin({ registry: SEED_REGISTRY, id: 'unpinned-cog', version: '1.0.0' }),
      workloadFromStorePin({ registry: SEED_REGISTRY, id: 'air-quality', version: '1.3.0' }),
      workloadFromStorePin({ registry: 'other-store', id: 'air-quality', version: '1.2.0' }),
    ];
    for (const w of cases) {
      const e = await refusal(h.host.load(w, seedConfig()));
      expect(e.code).toBe('admission');
      expect((await refusal(h.runtime.load(w, seedConfig()))).code).toBe('admission');
    }
    expect(h.sim.installed()).toEqual([]);
    expect(h.sim.requests.some((r) => r.path === '/api/v1/apps/install')).toBe(false);
    expect(runtimeTrail(h.chain)).toEqual([
      'workload.refuse unpinned-cog',
      'workload.refuse air-quality',
      'workload.refuse air-quality',
    ]);
  });

  it('refuses version drift: the store lists a newer version than pinned', async (ctx) => {
    const h = await setup(ctx);
    h.sim.setCatalog([storeCog('air-quality', '1.3.0'), ...DEFAULT_CATALOG.slice(1)]);
    const e = await refusal(h.host.load(AIR, seedConfig()));
    expect(e.code).toBe('admission');
    expect(e.message).toContain('version drift');
    expect(e.message).toContain('1.3.0');
    expect(h.sim.installed()).toEqual([]);
    assertNoToken(h, e);
  });

  it('refuses a sha256 mismatch between the store and the pin (and a workload sha256 the pin does not have)', async (ctx) => {
    const h = await setup(ctx);
    h.sim.setCatalog([{ ...storeCog('air-quality', '1.2.0'), sha256: 'f'.repeat(64) }]);
    const e = await refusal(h.host.load(AIR, seedConfig()));
    expect(e.code).toBe('admission');
    expect(e.message).toContain('sha256 mismatch');
    expect(h.sim.installed()).toEqual([]);
    const forged = workloadFromStorePin({
      ...(AIR.source.type === 'store_pin' ? AIR.source.pin : { registry: '', id: '', version: '' }),
      sha256: 'e'.repeat(64),
    });
    const f = await refusal(h.runtime.admit(forged));
    expect(f.code).toBe('admission');
    expect(f.field).toBe('source.sha256');
  });

  it('refuses a store that does not list the cog', async (ctx) => {
    const h = await setup(ctx);
    h.sim.setCatalog(DEFAULT_CATALOG.slice(1));
    const e = await refusal(h.runtime.admit(AIR));
    expect(e.code).toBe('admission');
    expect(e.message).toContain('does not list air-quality');
  });

  it('refuses a cog installed at another version than pinned, and leaves it alone', async (ctx) => {
    const h = await setup(ctx);
    h.sim.setCatalog([storeCog('air-quality', '1.1.0')]);
    await h.client.install('air-quality');
    h.sim.setCatalog(DEFAULT_CATALOG);
    const e = await refusal(h.host.load(AIR, seedConfig()));
    expect(e.code).toBe('admission');
    expect(e.message).toContain('installed on the Seed at 1.1.0');
    expect(h.sim.installed()).toMatchObject([{ id: 'air-quality', version: '1.1.0', running: true }]);
  });

  it('refuses a Seed that does not accept the token, without leaking it', async (ctx) => {
    const h = await setup(ctx);
    const wrong = `${h.token.slice(0, -4)}zzzz`;
    const rt = new SeedApiRuntime({
      api: new SeedClient({ url: h.sim.url, token: wrong, allowPlainHttp: true }),
      pins: PINS,
      nodeId: 'seed-node-1',
    });
    // Reads are served without a token: the store admits; the install (a write) is refused.
    await rt.admit(AIR);
    const e = await refusal(rt.load(AIR, seedConfig()));
    expect(e.code).toBe('runtime');
    expect((e as SeedApiFailure).seedCode).toBe('not_paired');
    expect(e.message).toContain('not_paired');
    expect(h.sim.installed()).toEqual([]);
    expect(e.message).not.toContain(wrong);
    assertNoToken(h, e);
  });
});
