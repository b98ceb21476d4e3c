import { join } from 'node:path';
import { type TestPlane, tempDir } from '@heddle/control-plane/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { saveToken } from '../credentials.js';
import { SeedClient } from '../seed-client.js';
import { seedPinWorkload } from '../seed-pins.js';
import { DEFAULT_CATALOG, SeedSimulator, selfSignedCert, storeCog } from '../simulator.js';
import { addSeed } from './seed-book.js';
import { seedContext } from './seed-gate.js';
import { openSeedPlane } from './seed-plane.test-util.js';
import { SEED_INSTALL_WINDOW_MS } from './seed-settle.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function seedPlane(
  installDelayMs = 20,
  now?: () => number,
): Promise<{ sim: SeedSimulator; p: TestPlane; token: string; tokenFile: string; nodeId: string }> {
  const sim = await SeedSimulator.start({ https: selfSignedCert('seed-s'), installDelayMs, tickMs: 50 });
  open.push(sim);
  const p = await openSeedPlane(tempDir(), {}, now);
  open.push(p);
  const token = sim.addToken();
  const tokenFile = join(tempDir(), 'seed.token');
  saveToken(tokenFile, token);
  const node = await addSeed(p.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile });
  return { sim, p, token, tokenFile, nodeId: node.node_id };
}

const until = async (ok: () => boolean): Promise<void> => {
  while (!ok()) await new Promise((r) => setTimeout(r, 100));
};

describe('Seed places whose install answer was lost are settled, as for hosts', () => {
  it('kept unsettled on disk, then settled from the Seed: recorded, running, visible, unloaded like any other', async () => {
    // The adapter reads the installed list back for about 4 s (SEED_RECONCILE: 5 reads, 1 s apart)
    // before it answers unsettled; the install lands 8 s after it started, so the first settle below
    // still finds nothing even when the machine is slow (4.6 s left it 0.6 s, too little under load).
    const { sim, p, nodeId } = await seedPlane(8_000);
    sim.installWithoutAnswer('early');
    const r = await p.plane.place({ store_pin: { id: 'thermal', version: '1.0.3', console_commands: [] } });
    expect(r.status).toBe('unsettled');
    const [u] = p.plane.unsettled();
    expect(u).toMatchObject({ node_id: nodeId, decision_id: r.decision_id, variant: 'store-pin-installed' });
    expect((await p.plane.settle()).pending).toEqual([r.decision_id]); // not on the Seed yet
    await until(() => sim.installed().length === 1);
    const report = await p.plane.settle();
    expect(report.placed).toEqual([r.decision_id]);
    expect(p.plane.unsettled()).toEqual([]);
    const inst = p.plane.instance(u?.expected_instance_id ?? '');
    expect(inst).toMatchObject({
      node_id: nodeId,
      workload: 'thermal',
      state: 'running',
      variant: 'store-pin-installed',
    });
    expect(p.plane.nodes().find((n) => n.node_id === nodeId)?.instances).toBe(1);
    expect(sim.installed()).toMatchObject([{ id: 'thermal', running: true }]);
    await p.plane.unload(inst.instance_id);
    expect(sim.installed()).toEqual([]);
    const phases = p.chain
      .range(0)
      .filter((e) => e.kind === 'workload.place')
      // cast: the plane chains its payloads as JSON objects
      .map((e) => (e.payload as { phase?: string }).phase);
    expect(phases).toContain('unsettled');
    expect(phases).toContain('settled');
  }, 20_000);

  it('an install that landed another version (the store moved on) is undone when settled', async () => {
    const { sim, p } = await seedPlane(4_600);
    sim.installWithoutAnswer('early');
    const placing = p.plane.place({ store_pin: { id: 'thermal', version: '1.0.3', console_commands: [] } });
    await new Promise((r) => setTimeout(r, 300));
    sim.setCatalog([...DEFAULT_CATALOG.filter((c) => c.id !== 'thermal'), storeCog('thermal', '1.1.0')]);
    expect((await placing).status).toBe('unsettled');
    await until(() => sim.installed().length === 1);
    expect(sim.installed()).toMatchObject([{ id: 'thermal', version: '1.1.0' }]);
    expect((await p.plane.settle()).nothing).toHaveLength(1);
    expect(sim.installed()).toEqual([]);
    expect(p.plane.unsettled()).toEqual([]);
  }, 20_000);
});

describe('a Seed decision settled after its install window', () => {
  it('leaves a cog at another version alone: the Seed does not say who installed it', async () => {
    let skew = 0;
    const { sim, p, nodeId, token } = await seedPlane(20, () => Date.now() + skew);
    const r = await p.plane.place({ store_pin: { id: 'thermal', version: '1.0.3', console_commands: [] } });
    const id = r.instance?.instance_id ?? '';
    await p.plane.unload(id);
    // The record of a place whose install never reached the Seed, pending while the Seed was away...
    p.store.putUnsettled({
      decision_id: 'd-lost-2',
      order_id: r.order_id ?? '',
      node_id: nodeId,
      expected_instance_id: id,
      variant: 'store-pin-installed',
      since_ms: Date.now(),
      attempts: 1,
      last_error: 'lost',
    });
    // ... meanwhile an operator installed the store's newer thermal by hand.
    sim.setCatalog([...DEFAULT_CATALOG.filter((c) => c.id !== 'thermal'), storeCog('thermal', '1.1.0')]);
    await new SeedClient({ url: sim.url, spki: sim.spki ?? '', token }).install('thermal');
    skew = SEED_INSTALL_WINDOW_MS + 1_000;
    expect((await p.plane.settle()).nothing).toEqual(['d-lost-2']);
    expect(sim.installed()).toMatchObject([{ id: 'thermal', version: '1.1.0' }]);
    expect(p.plane.unsettled()).toEqual([]);
    const settled = p.chain
      .range(0)
      // cast: the plane chains its payloads as JSON objects
      .filter((e) => e.kind === 'workload.place' && (e.payload as { phase?: string }).phase === 'settled')
      .map((e) => e.payload as Record<string, unknown>);
    expect(settled.at(-1)).toMatchObject({ outcome: 'nothing', left: 'thermal@1.1.0' });
  });
});

describe('a Seed decision settled after its install window, the pinned version there', () => {
  it('is placed as a cog already on the Seed: its unload leaves it installed', async () => {
    let skew = 0;
    const { sim, p, nodeId, token } = await seedPlane(20, () => Date.now() + skew);
    const r = await p.plane.place({ store_pin: { id: 'thermal', version: '1.0.3', console_commands: [] } });
    const id = r.instance?.instance_id ?? '';
    await p.plane.unload(id);
    p.store.putUnsettled({
      decision_id: 'd-lost-3',
      order_id: r.order_id ?? '',
      node_id: nodeId,
      expected_instance_id: id,
      variant: 'store-pin-installed',
      since_ms: Date.now(),
      attempts: 1,
      last_error: 'lost',
    });
    // An operator installed thermal by hand while the Seed could not be read.
    await new SeedClient({ url: sim.url, spki: sim.spki ?? '', token }).install('thermal');
    skew = SEED_INSTALL_WINDOW_MS + 1_000;
    expect((await p.plane.settle()).placed).toEqual(['d-lost-3']);
    expect(p.plane.instance(id)).toMatchObject({ variant: 'store-pin' });
    await p.plane.unload(id);
    expect(sim.installed()).toMatchObject([{ id: 'thermal', version: '1.0.3' }]);
  });
});

describe('a Seed decision whose install never landed', () => {
  it('stays pending within the install window, then is dropped (nothing installed)', async () => {
    let skew = 0;
    const { sim, p, nodeId } = await seedPlane(20, () => Date.now() + skew);
    const r = await p.plane.place({ store_pin: { id: 'thermal', version: '1.0.3', console_commands: [] } });
    const id = r.instance?.instance_id ?? '';
    await p.plane.unload(id);
    expect(sim.installed()).toEqual([]);
    // As if a second place of the same order had lost its answer and nothing reached the Seed.
    p.store.putUnsettled({
      decision_id: 'd-lost-1',
      order_id: r.order_id ?? '',
      node_id: nodeId,
      expected_instance_id: id,
      variant: 'store-pin-installed',
      since_ms: Date.now(),
      attempts: 1,
      last_error: 'lost',
    });
    expect((await p.plane.settle()).pending).toEqual(['d-lost-1']);
    expect(p.plane.unsettled()[0]?.last_error).toContain('may still be installing');
    skew = SEED_INSTALL_WINDOW_MS + 1_000;
    expect((await p.plane.settle()).nothing).toEqual(['d-lost-1']);
    expect(p.plane.unsettled()).toEqual([]);
  });
});

describe('the token of a Seed node', () => {
  it('a revoked token shows in node ls (alive, token refused), and add-seed refuses a token never issued', async () => {
    const { sim, p, token, nodeId } = await seedPlane();
    sim.revokeTokens(token);
    const [n] = await p.plane.refreshNodes();
    expect(n).toMatchObject({ node_id: nodeId, liveness: 'alive' });
    expect(n?.last_error).toMatch(/^token refused: /);
    const never = join(tempDir(), 'never.token');
    saveToken(never, 'seed_neverIssuedByThisSeed0123456789abcdef');
    await expect(
      addSeed(p.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile: never }),
    ).rejects.toThrow(/heddle-seed pair/);
  });

  it('does not send a refused token again on every refresh (3 auth failures block the IP), until it is replaced', async () => {
    const { sim, p, token, nodeId, tokenFile } = await seedPlane();
    sim.revokeTokens(token);
    sim.clearRequests();
    for (let i = 0; i < 4; i++) {
      const [n] = await p.plane.refreshNodes();
      expect(n).toMatchObject({ node_id: nodeId, liveness: 'alive' });
      expect(n?.last_error).toMatch(/^token refused: /);
    }
    const refused = () => sim.requests.filter((r) => r.token && (r.status === 401 || r.status === 403));
    expect(refused()).toHaveLength(1);
    // A new token in the file is checked at the next refresh.
    saveToken(tokenFile, sim.addToken());
    const [n] = await p.plane.refreshNodes();
    expect(n?.last_error ?? null).toBeNull();
    expect(refused()).toHaveLength(1);
  });

  it('places on a Seed are gated with the network its cogs get: egress', () => {
    const w = seedPinWorkload({ id: 'thermal', version: '1.0.3', console_commands: [] });
    expect(seedContext(w, 'paired').network).toBe('egress');
  });
});
