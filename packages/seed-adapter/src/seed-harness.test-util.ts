// Shared by the SeedApiRuntime tests (not exported): a SeedSimulator over real HTTP (or HTTPS), a paired
// SeedClient, the adapter, and a WorkloadHost over the real gate and a real memory chain.
import { type Chain, openMemoryChain } from '@heddle/chain';
import { Gate, type Policy, parsePolicy } from '@heddle/gate';
import { RuntimeError, type WorkloadConfig, WorkloadHost } from '@heddle/runtime';
import { expect } from 'vitest';
import type { SeedApi } from './seed-api.js';
import { SeedClient } from './seed-client.js';
import type { SeedPin } from './seed-pins.js';
import { SeedApiRuntime, type SeedApiRuntimeOptions } from './seed-runtime.js';
import { SeedSimulator } from './simulator/seed-simulator.js';
import { DEFAULT_CATALOG, type SeedSimulatorOptions } from './simulator/sim-types.js';
import { selfSignedCert } from './test-tls.js';

/** Permits the five host actions on operator-pinned cogs of a paired node, up to `egress` (the Seed's). */
export const SEED_POLICY: Policy = parsePolicy({
  version: 1,
  name: 'seed-test',
  rules: [
    {
      id: 'seed-cogs',
      effect: 'permit',
      actions: ['workload.install', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      min_package_trust: 'operator_attested',
      min_node_tier: 'paired',
      max_network: 'egress',
    },
    {
      id: 'preempt-any-cog',
      effect: 'permit',
      description: 'a console run may stop and resume cogs the operator never pinned (recorded as unsigned)',
      actions: ['workload.stop', 'workload.start'],
      kinds: ['cog'],
      min_package_trust: 'unsigned',
      min_node_tier: 'paired',
      max_network: 'egress',
    },
  ],
});

const sha = (id: string): string => {
  const c = DEFAULT_CATALOG.find((x) => x.id === id);
  if (c?.sha256 === undefined) throw new Error(`no catalog cog ${id}`);
  return c.sha256;
};

/**
 * Pins of the simulator's default catalog (air-quality with its sha256 and three console commands, of
 * which `--calibrate` is not in the Seed manifest's allowed_commands).
 */
export const PINS: readonly SeedPin[] = [
  {
    id: 'air-quality',
    version: '1.2.0',
    sha256: sha('air-quality'),
    console_commands: ['--once', '--help', '--calibrate'],
  },
  { id: 'vibration', version: '0.4.1', console_commands: [] },
  { id: 'presence', version: '2.0.0', console_commands: [] },
  { id: 'thermal', version: '1.0.3', console_commands: [] },
];

/** The Seed's node id in the tests. */
export const SEED_NODE = 'seed-node-1';

/** A load config (listener) on the Seed node. */
export function seedConfig(values: WorkloadConfig['values'] = {}): WorkloadConfig {
  return {
    values,
    runMode: { type: 'listener' },
    host: { nodeId: SEED_NODE, dataDir: '/var/lib/heddle/seed' },
  };
}

/** A simulator, its token, a paired client, the adapter and a governed host. */
export interface SeedHarness {
  readonly sim: SeedSimulator;
  readonly token: string;
  readonly client: SeedClient;
  readonly runtime: SeedApiRuntime;
  readonly host: WorkloadHost;
  readonly chain: Chain;
  /** A fresh adapter and host over the same Seed and chain (a restart of the host process). */
  restart(): { runtime: SeedApiRuntime; host: WorkloadHost };
  close(): Promise<void>;
}

/** Options of {@link seedHarness}: the simulator's, the adapter's, HTTPS, and an API wrapper. */
export interface SeedHarnessOptions {
  readonly sim?: SeedSimulatorOptions;
  readonly runtime?: Partial<SeedApiRuntimeOptions>;
  readonly https?: boolean;
  /** Wraps the client (to inject a fault at one call); default: the client itself. */
  readonly wrap?: (api: SeedApi) => SeedApi;
  readonly installTimeoutMs?: number;
}

/** Builds a {@link SeedHarness}. */
export async function seedHarness(o: SeedHarnessOptions = {}): Promise<SeedHarness> {
  const cert = o.https === true ? selfSignedCert('seed-sim') : undefined;
  const sim = await SeedSimulator.start({
    installDelayMs: 20,
    tickMs: 20,
    ...(cert === undefined ? {} : { https: { cert: cert.cert, key: cert.key } }),
    ...o.sim,
  });
  const token = sim.addToken();
  const client = new SeedClient({
    url: sim.url,
    token,
    ...(cert === undefined ? { allowPlainHttp: true } : { spki: cert.spki }),
    ...(o.installTimeoutMs === undefined ? {} : { installTimeoutMs: o.installTimeoutMs }),
  });
  const api = o.wrap === undefined ? client : o.wrap(client);
  const chain = await openMemoryChain();
  const gate = new Gate({ policy: SEED_POLICY, recorder: chain });
  const make = (): { runtime: SeedApiRuntime; host: WorkloadHost } => {
    const runtime = new SeedApiRuntime({
      api,
      pins: PINS,
      nodeId: SEED_NODE,
      reconcile: { attempts: 20, pollMs: 50 },
      ...o.runtime,
    });
    const host = new WorkloadHost({ runtime, gate, recorder: chain, agent: 'seed-host', nodeTier: 'paired' });
    return { runtime, host };
  };
  const { runtime, host } = make();
  return { sim, token, client, runtime, host, chain, restart: make, close: () => sim.close() };
}

/** Asserts the token appears nowhere in `things` (JSON, with errors' messages and stacks) or the chain. */
export function assertNoToken(h: SeedHarness, ...things: unknown[]): void {
  const text = (x: unknown): string =>
    x instanceof Error ? `${x.message}\n${x.stack ?? ''}\n${JSON.stringify(x)}` : (JSON.stringify(x) ?? '');
  for (const t of things) expect(text(t)).not.toContain(h.token);
  expect(JSON.stringify(h.chain.range(0))).not.toContain(h.token);
}

/** The RuntimeError a promise rejects with (fails the test otherwise). */
export async function refusal(p: Promise<unknown>): Promise<RuntimeError> {
  const r = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (r instanceof RuntimeError) return r;
  throw new Error(`expected a RuntimeError, got ${String(r)}`);
}

/** `kind` of each chained event of the runtime (source `workload.runtime`) from `from` on, with phase. */
export function runtimeTrail(chain: Chain, from = 0): string[] {
  return chain
    .range(from)
    .filter((e) => e.source === 'workload.runtime')
    .map((e) => {
      const p = e.payload as { phase?: unknown; workload_id?: unknown };
      return [e.kind, p.workload_id, p.phase].filter((x) => x !== undefined).join(' ');
    });
}

/** A SeedApi that delegates every call to `api`, except the ones `over` replaces. */
export function wrapApi(api: SeedApi, over: Partial<SeedApi>): SeedApi {
  const base: SeedApi = {
    url: api.url,
    status: () => api.status(),
    identity: () => api.identity(),
    pairStatus: () => api.pairStatus(),
    openPairWindow: () => api.openPairWindow(),
    pair: (name) => api.pair(name),
    available: () => api.available(),
    installed: () => api.installed(),
    install: (id) => api.install(id),
    start: (id) => api.start(id),
    stop: (id) => api.stop(id),
    uninstall: (id) => api.uninstall(id),
    logs: (id, lines) => api.logs(id, lines),
    console: (id, command) => api.console(id, command),
    manifest: (id) => api.manifest(id),
    getConfig: (id) => api.getConfig(id),
    setConfig: (id, config) => api.setConfig(id, config),
    verifyToken: () => api.verifyToken(),
  };
  return { ...base, ...over };
}
