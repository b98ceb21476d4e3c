// Issue 16 item 10, the Seed's cases (moved from control-plane's place-dry-run.test.ts): a dry run of a
// store pin asks the same gate checks as the real place. A Seed simulator behind pinned TLS and a real
// control plane with the Seed's driver, whose gate policy is switched between cases; each case places
// a dry run, then the same order for real, and the two must agree (chosen and placed, or refused).
import { join } from 'node:path';
import { type PlaceResult, PlaneError } from '@heddle/control-plane';
import { type TestPlane, tempDir } from '@heddle/control-plane/testing';
import { type Policy, parsePolicy } from '@heddle/gate';
import { routeNetwork } from '@heddle/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveToken } from '../credentials.js';
import { SeedClient } from '../seed-client.js';
import { SeedApiRuntime } from '../seed-runtime.js';
import { SeedSimulator, selfSignedCert } from '../simulator.js';
import { addSeed } from './seed-book.js';
import { openSeedPlane } from './seed-plane.test-util.js';

const ACTIONS = [
  'workload.install',
  'workload.place',
  'workload.load',
  'workload.start',
  'workload.stop',
  'workload.unload',
] as const;

/** Like the default policy: cogs on paired nodes, network at most `lan`. */
const LAN_ONLY: Policy = parsePolicy({
  version: 1,
  name: 'lan-only',
  rules: [{ id: 'lan', effect: 'permit', actions: [...ACTIONS], kinds: ['cog'], max_network: 'lan' }],
});
/** Any network. */
const ANY_NETWORK: Policy = parsePolicy({
  version: 1,
  name: 'any-network',
  rules: [{ id: 'any', effect: 'permit', actions: [...ACTIONS], kinds: ['cog'], max_network: 'egress' }],
});
/** Any network, but loads and starts only on `pinned` nodes. */
const LOAD_ON_PINNED: Policy = parsePolicy({
  version: 1,
  name: 'load-on-pinned',
  rules: [
    {
      id: 'place',
      effect: 'permit',
      actions: ['workload.place', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
    {
      id: 'run-pinned',
      effect: 'permit',
      actions: ['workload.install', 'workload.load', 'workload.start'],
      kinds: ['cog'],
      max_network: 'egress',
      min_node_tier: 'pinned',
    },
  ],
});

const TOKEN = 'sim-token-0123456789abcdef';
let sim: SeedSimulator;
let tokenFile: string;
let p: TestPlane;

beforeAll(async () => {
  sim = await SeedSimulator.start({
    https: selfSignedCert('seed-1'),
    tokens: [TOKEN],
    installDelayMs: 20,
    tickMs: 50,
  });
  tokenFile = join(tempDir(), 'seed.token');
  saveToken(tokenFile, TOKEN);
  p = await openSeedPlane(tempDir(), {}, undefined, ANY_NETWORK);
});

afterAll(async () => {
  await p?.close();
  await sim?.close();
});

/** What a dry run said and what the real place then did. */
interface Pair {
  readonly dry: PlaceResult;
  readonly real: PlaceResult | PlaneError;
}

/** A dry run of `order`, then the same order for real; they must agree. */
async function dryThenReal(order: Record<string, unknown>): Promise<Pair> {
  const dry = await p.plane.place({ ...order, dry_run: true });
  expect(dry.status).toBe('dry_run');
  const real = await p.plane.place(order).catch((err: unknown) => {
    if (err instanceof PlaneError) return err;
    throw err;
  });
  const chosen = dry.explanation.outcome === 'placed';
  const placed = !(real instanceof PlaneError) && real.status === 'placed';
  expect({ dry_run_chosen: chosen, summary: dry.explanation.summary }).toEqual({
    dry_run_chosen: placed,
    summary: dry.explanation.summary,
  });
  if (!(real instanceof PlaneError) && real.instance !== null) {
    await p.plane.stop(real.instance.instance_id, 500);
    await p.plane.unload(real.instance.instance_id);
  }
  return { dry, real };
}

/** The governance reason of the (only) node of a dry run. */
function governanceDetail(pair: Pair): string {
  const failures = pair.dry.explanation.rows.flatMap((r) => r.failures ?? []);
  return failures.find((f) => f.constraint === 'governance')?.detail ?? '';
}

describe('a dry run and the real place of a store pin agree (issue 16 item 10)', () => {
  const order = { store_pin: { id: 'air-quality', version: '1.2.0', console_commands: [] } };
  let seedId = '';

  it('registers the Seed', async () => {
    seedId = (await addSeed(p.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile })).node_id;
    expect(p.plane.nodes()).toHaveLength(1);
  });

  it('Seed (its firmware gives cogs egress): refused by both under a LAN-only policy, placed by both when egress is allowed', async () => {
    p.gate.setPolicy(LAN_ONLY);
    const refused = await dryThenReal(order);
    expect(refused.dry.explanation.outcome).toBe('unplaceable');
    expect(governanceDetail(refused)).toMatch(/^deny: workload\.place: .*network <= lan \(is egress\)/);
    expect(refused.real).toBeInstanceOf(PlaneError);
    expect(refused.real instanceof PlaneError && refused.real.code).toBe('unplaceable');
    expect(sim.installed().find((c) => c.id === 'air-quality')).toBeUndefined();
    p.gate.setPolicy(ANY_NETWORK);
    const placed = await dryThenReal(order);
    expect(placed.dry.explanation.node_id).toBe(seedId);
  });

  it('Seed: a dry run also asks for the load and the start (a policy that permits the place but not the load)', async () => {
    p.gate.setPolicy(LOAD_ON_PINNED);
    const refused = await dryThenReal(order);
    expect(governanceDetail(refused)).toMatch(/^deny: workload\.install: /);
    // Added again as pinned: the controller's host for that Seed is governed at the new tier.
    await addSeed(p.plane, sim.url, { tier: 'pinned', spki: sim.spki ?? '', tokenFile });
    const placed = await dryThenReal(order);
    expect(placed.dry.explanation.outcome).toBe('placed');
    // And back to paired: a demotion applies to the next load too, in the dry run and for real.
    await addSeed(p.plane, sim.url, { tier: 'paired', spki: sim.spki ?? '', tokenFile });
    const demoted = await dryThenReal(order);
    expect(demoted.real).toBeInstanceOf(PlaneError);
  });

  it('the network of the Seed route is what its adapter reports', () => {
    const client = new SeedClient({ url: sim.url, spki: sim.spki ?? '', token: TOKEN });
    expect(routeNetwork('remote.api')).toBe(
      new SeedApiRuntime({ api: client, pins: [], nodeId: 'x' }).networkExposure(),
    );
  });
});
