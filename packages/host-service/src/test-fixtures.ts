// Shared helpers of this package's tests (not exported from the package): a real host service behind
// a real WebSocket server, real native and WASI runtimes, a real chain, and a test controller.
import { chmodSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import {
  type JsonValue,
  type KeyPair,
  keyPairFromSecret,
  nodeIdFromPublicKey,
  toHex,
} from '@heddle/envelope';
import { Gate, type Policy, parsePolicy } from '@heddle/gate';
import { buildCogPackage, RevocationHolder, RevocationList, TrustAnchors } from '@heddle/package';
import {
  AllowListPolicy,
  type CtlMethod,
  createRequest,
  type SignedCtl,
  signRequest,
} from '@heddle/protocol';
import { NativeRuntime, WasiRuntime, WorkloadHost } from '@heddle/runtime';
import { type CallOptions, type CallResult, DirPackageSource, WireServer, WireSession } from '@heddle/wire';
import { HostService, type HostServiceOptions } from './host-service.js';

export const controllerKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x41));
export const hostKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x42));
export const publisherKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x43));
export const operatorKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x44));
export const strangerKeys: KeyPair = keyPairFromSecret(new Uint8Array(32).fill(0x45));
export const CONTROLLER_ID: string = nodeIdFromPublicKey(controllerKeys.publicKey);
export const HOST_ID: string = nodeIdFromPublicKey(hostKeys.publicKey);

/** Permits every host action on cogs (native runs with egress). */
export const OPEN_POLICY: Policy = parsePolicy({
  version: 1,
  name: 'host-service-test',
  rules: [
    {
      id: 'cogs',
      effect: 'permit',
      actions: ['workload.install', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
  ],
});

/** A world-traversable temporary directory (the native adapter runs workloads as `nobody` under root). */
export function tempDir(prefix = 'heddle-hs-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(d, 0o755);
  return d;
}

const EXAMPLES = resolve(import.meta.dirname, '../../../examples');
const HELLO = join(EXAMPLES, 'hello-cog');

/** A built and signed package: its directory and manifest hash. */
export interface BuiltPackage {
  readonly dir: string;
  readonly manifestHash: string;
}

/** Builds and signs the cog source in `src` with `keys`. */
export async function buildPackage(src: string, keys: KeyPair = publisherKeys): Promise<BuiltPackage> {
  const out = join(tempDir('heddle-hs-pkg-'), 'pkg');
  const built = await buildCogPackage(src, out, { keys: [keys] });
  return { dir: out, manifestHash: built.package.manifestHash };
}

/** The example hello-cog (a native shell script), built and signed by `keys`. */
export function helloPackage(keys: KeyPair = publisherKeys): Promise<BuiltPackage> {
  return buildPackage(HELLO, keys);
}

/** The example wasi-cog (a WASI module printing a greeting), built and signed by `keys`. */
export function wasiPackage(keys: KeyPair = publisherKeys): Promise<BuiltPackage> {
  return buildPackage(join(EXAMPLES, 'wasi-cog'), keys);
}

let uniques = 0;
/** A copy of the example hello-cog source with a version of its own (so its manifest hash is new). */
export function helloSource(): string {
  const dir = join(tempDir('heddle-hs-src-'), 'src');
  cpSync(HELLO, dir, { recursive: true });
  const cog = JSON.parse(readFileSync(join(dir, 'cog.json'), 'utf8')) as { version: string };
  cog.version = `0.2.${++uniques}`;
  writeFileSync(join(dir, 'cog.json'), JSON.stringify(cog));
  return dir;
}

/** A running host: service, server, chain and the revocation holder. */
export interface TestHost {
  readonly service: HostService;
  readonly server: WireServer;
  readonly chain: Chain;
  readonly holder: RevocationHolder;
  readonly dataDir: string;
  readonly url: string;
  close(): Promise<void>;
}

/** Starts a host on 127.0.0.1 with native and WASI routes (or `routes`), trusting `publisherKeys`. */
export async function startHost(
  options: {
    routes?: readonly ('native' | 'wasi')[];
    revocationPath?: string;
    policy?: Policy;
    /** Called by the WASI adapter right after each load (to race a revocation against a place). */
    afterWasiLoad?: () => void;
  } & Partial<HostServiceOptions> = {},
): Promise<TestHost> {
  const dataDir = tempDir();
  const chain = await openChainFile(join(dataDir, 'chain.jsonl'));
  const holder =
    options.revocationPath === undefined
      ? new RevocationHolder(RevocationList.empty())
      : new RevocationHolder({ path: options.revocationPath, trustedKeys: [toHex(operatorKeys.publicKey)] });
  const gate = new Gate({ policy: options.policy ?? OPEN_POLICY, recorder: chain, revocations: holder });
  const afterWasiLoad = options.afterWasiLoad;
  const hosts: WorkloadHost[] = [];
  for (const route of options.routes ?? ['native', 'wasi']) {
    const runtime =
      route === 'native'
        ? new NativeRuntime({
            stateDir: join(dataDir, 'native'),
            dataRoot: join(dataDir, 'instances'),
            ...(process.getuid?.() === 0 ? { runAsUser: 'nobody' } : { allowHostUser: true }),
          })
        : afterWasiLoad === undefined
          ? new WasiRuntime({ dataRoot: join(dataDir, 'instances') })
          : new HookedWasi(join(dataDir, 'instances'), afterWasiLoad);
    hosts.push(new WorkloadHost({ runtime, gate, recorder: chain, agent: 'host', nodeTier: 'paired' }));
  }
  const service = new HostService({
    keys: hostKeys,
    controllers: new AllowListPolicy({ publicKeys: [controllerKeys.publicKey] }),
    anchors: new TrustAnchors([
      { id: 'publisher', role: 'publisher', publicKey: toHex(publisherKeys.publicKey) },
      { id: 'operator', role: 'operator', publicKey: toHex(operatorKeys.publicKey) },
    ]),
    revocations: holder,
    routes: hosts,
    recorder: chain,
    dataDir,
    ...(options.facts === undefined ? {} : { facts: options.facts }),
    ...(options.refusalBudget === undefined ? {} : { refusalBudget: options.refusalBudget }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const server = await WireServer.listen({ handler: service.handler });
  return {
    service,
    server,
    chain,
    holder,
    dataDir,
    url: server.url,
    close: async () => {
      await service.shutdown(1000).catch(() => undefined);
      await server.close();
      await chain.close();
    },
  };
}

/** A WASI adapter that calls a hook right after each load. */
class HookedWasi extends WasiRuntime {
  readonly #hook: () => void;
  constructor(dataRoot: string, hook: () => void) {
    super({ dataRoot });
    this.#hook = hook;
  }
  override async load(...args: Parameters<WasiRuntime['load']>): ReturnType<WasiRuntime['load']> {
    const handle = await super.load(...args);
    this.#hook();
    return handle;
  }
}

let decisions = 0;
/** A fresh decision id. */
export function decision(): string {
  decisions++;
  return decisions.toString(16).padStart(64, 'd');
}

/** A signed request from `keys` (the controller by default) to the host. */
export function request(
  method: CtlMethod,
  body: { [key: string]: JsonValue } = {},
  options: { keys?: KeyPair; target?: string; decisionId?: string; now?: number; ttlMs?: number } = {},
): SignedCtl {
  const keys = options.keys ?? controllerKeys;
  const mutating = !['workload.status', 'workload.describe', 'workload.logs'].includes(method);
  const decisionId = options.decisionId ?? (mutating ? decision() : undefined);
  return signRequest(
    createRequest({
      method,
      requester: nodeIdFromPublicKey(keys.publicKey),
      target: options.target ?? HOST_ID,
      body,
      now: options.now ?? Date.now(),
      ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
      ...(decisionId === undefined ? {} : { decisionId }),
    }),
    keys,
  );
}

/** One call on a fresh connection, serving `pkgDir` when given. */
export async function call(
  url: string,
  signed: SignedCtl,
  options: { pkgDir?: string } & CallOptions = {},
): Promise<CallResult> {
  const session = await WireSession.connect(url);
  const source = options.pkgDir === undefined ? undefined : DirPackageSource.open(options.pkgDir);
  try {
    return await session.call(signed, {
      expectedPublicKey: hostKeys.publicKey,
      timeoutMs: 30_000,
      ...(source === undefined ? {} : { source }),
      ...options,
    });
  } finally {
    await session.close();
    await source?.close();
  }
}

/** A place body for the hello cog. */
export function placeBody(
  manifestHash: string,
  variant: string,
  extra: { start?: boolean; mode?: JsonValue; values?: { [key: string]: JsonValue }; name?: string } = {},
): { [key: string]: JsonValue } {
  return {
    name: extra.name ?? (variant === 'wasm32-wasi' ? 'wasi-cog' : 'hello-cog'),
    manifest_hash: manifestHash,
    variant,
    config: { mode: extra.mode ?? { type: 'once' }, values: extra.values ?? {} },
    start: extra.start ?? false,
  };
}

/** The kinds and sources of the chain's events from `from`, for comparing. */
export function trail(chain: Chain, from = 0): string[] {
  return chain.range(from).map((e) => `${e.source} ${e.kind}`);
}
