// Issue 16 item 10: a dry run runs the same checks as the real place, on every route. Real hosts
// (native, WASI, container over the fake engine) and a real control plane whose gate policy is
// switched between cases (the Seed's cases are in @heddle/seed-adapter, src/controller/seed-dry-run.test.ts); each case places a dry run, then the same order for real, and the two
// must agree (chosen and placed, or refused).
import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { Gate, type Policy, parsePolicy } from '@heddle/gate';
import { routeNetwork } from '@heddle/model';
import { NO_REVOCATIONS } from '@heddle/package';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContainerHost, containerPackage, startContainerHost } from './container-host.test-util.js';
import { ControlPlane } from './control-plane.js';
import { PlaneError } from './errors.js';
import type { PlaceResult } from './place.js';
import { SqliteStateStore } from './sqlite-store.js';
import {
  controllerKeys,
  examplePackage,
  startHost,
  type TestHost,
  tempDir,
  testAnchors,
} from './test-fixtures.js';

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
/** Any network, and emulated containers. */
const EMULATION_OK: Policy = parsePolicy({
  version: 1,
  name: 'emulation-ok',
  rules: [
    {
      id: 'any',
      effect: 'permit',
      actions: [...ACTIONS],
      kinds: ['cog'],
      max_network: 'egress',
      emulated: true,
    },
  ],
});
let wasiHost: TestHost;
let nativeHost: TestHost;
let plane: ControlPlane;
let gate: Gate;
let store: SqliteStateStore;
let closeChain: () => Promise<void>;
let wasiPkg: string;
let nativePkg: string;
let ctrHost: ContainerHost;
let ctrPkg: string;

beforeAll(async () => {
  [wasiHost, nativeHost] = await Promise.all([startHost(['wasi']), startHost(['native'])]);
  ctrHost = await startContainerHost();
  [wasiPkg, nativePkg, ctrPkg] = await Promise.all([
    examplePackage('wasi-cog'),
    examplePackage('hello-cog', true),
    containerPackage(),
  ]);
  const dir = tempDir();
  store = SqliteStateStore.open(join(dir, 'state.db'));
  const chain = await openChainFile(join(dir, 'chain.jsonl'));
  closeChain = () => chain.close();
  gate = new Gate({ policy: ANY_NETWORK, recorder: chain });
  plane = new ControlPlane({
    keys: controllerKeys,
    store,
    chain,
    gate,
    anchors: testAnchors(),
    revocations: NO_REVOCATIONS,
    stateDir: dir,
    config: { reconcileTimeoutMs: 3_000, callTimeoutMs: 5_000, placeTimeoutMs: 20_000 },
  });
});

afterAll(async () => {
  await Promise.all([wasiHost?.close(), nativeHost?.close(), ctrHost?.close()]);
  store?.close();
  await closeChain?.();
});

/** What a dry run said and what the real place then did. */
interface Pair {
  readonly dry: PlaceResult;
  readonly real: PlaceResult | PlaneError;
}

/** A dry run of `order`, then the same order for real; they must agree. */
async function dryThenReal(order: Record<string, unknown>): Promise<Pair> {
  const dry = await plane.place({ ...order, dry_run: true });
  expect(dry.status).toBe('dry_run');
  const real = await plane.place(order).catch((err: unknown) => {
    if (err instanceof PlaneError) return err;
    throw err;
  });
  const chosen = dry.explanation.outcome === 'placed';
  const placed = !(real instanceof PlaneError) && real.status === 'placed';
  expect({ dry_run_chosen: chosen, summary: dry.explanation.summary }).toEqual({
    dry_run_chosen: placed,
    summary: dry.explanation.summary,
  });
  if (placed) {
    const id = (real as PlaceResult).instance?.instance_id as string;
    await plane.stop(id, 500);
    await plane.unload(id);
  }
  return { dry, real };
}

/** The governance reason of the (only) node of a dry run. */
function governanceDetail(p: Pair): string {
  const failures = p.dry.explanation.rows.flatMap((r) => r.failures ?? []);
  return failures.find((f) => f.constraint === 'governance')?.detail ?? '';
}

describe('a dry run and the real place agree, route by route (issue 16 item 10)', () => {
  it('registers a WASI host, a native host and a container host', async () => {
    await plane.addNode(wasiHost.url, { tier: 'paired' });
    await plane.addNode(nativeHost.url, { tier: 'paired' });
    const ctr = await plane.addNode(ctrHost.url, { tier: 'paired' });
    expect(ctr.routes).toEqual(['container']);
    expect(plane.nodes()).toHaveLength(3);
  });

  it('wasi (network none): chosen and placed under a LAN-only policy', async () => {
    gate.setPolicy(LAN_ONLY);
    const p = await dryThenReal({ package_dir: wasiPkg, node: wasiHost.service.nodeId });
    expect(p.dry.explanation.outcome).toBe('placed');
  });

  it('native (network egress): refused by both under a LAN-only policy, placed by both when egress is allowed', async () => {
    gate.setPolicy(LAN_ONLY);
    const refused = await dryThenReal({ package_dir: nativePkg });
    expect(refused.real).toBeInstanceOf(PlaneError);
    expect(governanceDetail(refused)).toContain('network');
    gate.setPolicy(ANY_NETWORK);
    const placed = await dryThenReal({ package_dir: nativePkg });
    expect(placed.dry.explanation.node_id).toBe(nativeHost.service.nodeId);
  });

  it('container, emulated here (network none): refused by both when the policy allows no emulation, placed by both when it does', async () => {
    const order = { package_dir: ctrPkg, allow_emulated: true };
    gate.setPolicy(LAN_ONLY);
    const refused = await dryThenReal(order);
    expect(governanceDetail(refused)).toContain('emulat');
    gate.setPolicy(EMULATION_OK);
    const placed = await dryThenReal(order);
    expect(placed.dry.explanation.rows[0]).toMatchObject({
      node_id: ctrHost.nodeId,
      verdict: 'chosen',
      execution: 'emulated',
    });
  });

  it('the network of each route is what its adapter reports', () => {
    expect(routeNetwork('native')).toBe('egress');
    expect(routeNetwork('wasi')).toBe('none');
    expect(routeNetwork('no-such-route')).toBe('egress');
  });
});
