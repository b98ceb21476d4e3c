import { join } from 'node:path';
import { planeError, type TestPlane, tempDir } from '@heddle/control-plane/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveToken } from '../credentials.js';
import { SeedSimulator, selfSignedCert } from '../simulator.js';
import { addSeed } from './seed-book.js';
import { openSeedPlane } from './seed-plane.test-util.js';

const TOKEN = 'sim-token-0123456789abcdef';
let sim: SeedSimulator;
let p: TestPlane;
let tokenFile: string;
let seedId = '';

beforeAll(async () => {
  sim = await SeedSimulator.start({
    https: selfSignedCert('seed-1'),
    tokens: [TOKEN],
    installDelayMs: 50,
    tickMs: 50,
  });
  p = await openSeedPlane();
  tokenFile = join(tempDir(), 'seed.token');
  saveToken(tokenFile, TOKEN);
});
afterAll(async () => {
  await p.close();
  await sim.close();
});

describe('a Cognitum Seed as a node of the controller', () => {
  it('refuses a certificate that is not the pinned one, and a Seed that does not accept the token', async () => {
    const wrong = await planeError(
      addSeed(p.plane, sim.url, { tier: 'paired', spki: 'ab'.repeat(32), tokenFile }),
    );
    expect(wrong.code).toBe('key_mismatch');
    const other = join(tempDir(), 'other.token');
    saveToken(other, 'not-a-paired-token-00000');
    const unpaired = await planeError(
      addSeed(p.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile: other }),
    );
    expect(unpaired.message).toContain('heddle-seed pair');
    expect(p.plane.nodes()).toEqual([]);
  });

  it('is registered with its claimed capabilities and placed onto with a store pin; status, logs, stop, unload', async () => {
    const node = await addSeed(p.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile });
    seedId = node.node_id;
    expect(node).toMatchObject({ routes: ['remote.api'], tier: 'paired', liveness: 'alive' });
    const r = await p.plane.place({
      store_pin: { id: 'air-quality', version: '1.2.0', console_commands: [] },
    });
    expect(r.status).toBe('placed');
    expect(r.instance).toMatchObject({
      node_id: seedId,
      workload: 'air-quality',
      runtime: 'remote.api',
      state: 'running',
    });
    const id = r.instance?.instance_id ?? '';
    expect(sim.installed().find((c) => c.id === 'air-quality')?.running).toBe(true);
    expect((await p.plane.status(id)).node).toMatchObject({ state: 'running' });
    await new Promise((res) => setTimeout(res, 200));
    expect((await p.plane.logs(id)).lines.length).toBeGreaterThan(0);
    await p.plane.stop(id, 500);
    expect(sim.installed().find((c) => c.id === 'air-quality')?.running).toBe(false);
    await p.plane.unload(id);
    expect(sim.installed().find((c) => c.id === 'air-quality')).toBeUndefined();
    expect(p.plane.instance(id).state).toBe('unloaded');
    const text = JSON.stringify(p.chain.range(0));
    expect(text).not.toContain(TOKEN);
    expect(p.chain.verify().ok).toBe(true);
  });

  it('a pin the store does not match is refused by the Seed’s admission; a package order never goes to a Seed', async () => {
    const drift = await planeError(
      p.plane.place({ store_pin: { id: 'vibration', version: '9.9.9', console_commands: [] } }),
    );
    expect(drift.code).toBe('refused');
    expect(Object.values(drift.reasons).join(' ')).toContain('admission');
    const none = await planeError(
      p.plane.place({
        store_pin: { id: 'vibration', version: '0.4.1', console_commands: [] },
        node: 'a'.repeat(32),
      }),
    );
    expect(none.code).toBe('unknown_node');
  });
});

describe('a controller restart', () => {
  it('adopts the Seed instances it placed again from its state, and still unloads only what it installed', async () => {
    const dir = tempDir();
    const first = await openSeedPlane(dir);
    await addSeed(first.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile });
    const r = await first.plane.place({
      store_pin: { id: 'presence', version: '2.0.0', console_commands: [] },
      start: false,
    });
    const id = r.instance?.instance_id ?? '';
    await first.close();
    const second = await openSeedPlane(dir);
    try {
      expect(second.plane.instance(id)).toMatchObject({
        node_id: r.instance?.node_id,
        variant: 'store-pin-installed',
      });
      await second.plane.start(id);
      expect(sim.installed().find((c) => c.id === 'presence')?.running).toBe(true);
      await second.plane.stop(id, 200);
      await second.plane.unload(id);
      expect(sim.installed().find((c) => c.id === 'presence')).toBeUndefined();
    } finally {
      await second.close();
    }
  });
});
