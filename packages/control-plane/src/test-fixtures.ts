// Shared helpers of this package's tests (not exported from the package): real hosts (host service
// behind a real WebSocket server, real WASI and native runtimes), example packages, and (from
// test-plane.ts) a real control plane in a temporary directory.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Chain, openChainFile } from '@heddle/chain';
import { type KeyPair, keyPairFromSecret, toHex } from '@heddle/envelope';
import { Gate, type Policy, parsePolicy } from '@heddle/gate';
import { HostService, type HostServiceOptions } from '@heddle/host-service';
import { buildCogPackage, NO_REVOCATIONS, RevocationHolder, TrustAnchors } from '@heddle/package';
import { AllowListPolicy, type SignedCtl } from '@heddle/protocol';
import { NativeRuntime, WasiRuntime, WorkloadHost } from '@heddle/runtime';
import { type CallHandler, WireServer } from '@heddle/wire';
import {
  controllerKeys,
  OPEN_POLICY,
  operatorKeys,
  publisherKeys,
  tempDir,
  testAnchors,
} from './test-plane.js';

export {
  controllerKeys,
  OPEN_POLICY,
  openPlane,
  operatorKeys,
  planeError,
  publisherKeys,
  type TestPlane,
  tempDir,
  testAnchors,
} from './test-plane.js';

const EXAMPLES = resolve(import.meta.dirname, '../../../examples');

let versions = 0;
/**
 * An example cog (`hello-cog` or `wasi-cog`) with a version of its own, built and signed by the
 * publisher; `nativeOnly` drops hello-cog's placeholder WASI variant; `noConsole` drops its console
 * commands (a cog with console commands is not moved off its node); `resources` replaces its resources.
 */
export async function examplePackage(
  name: 'hello-cog' | 'wasi-cog',
  nativeOnly = false,
  noConsole = false,
  resources?: { cpu_pct: number; ram_mb: number },
): Promise<string> {
  const src = join(tempDir('heddle-cp-src-'), 'src');
  cpSync(join(EXAMPLES, name), src, { recursive: true });
  const cog = JSON.parse(readFileSync(join(src, 'cog.json'), 'utf8')) as {
    version: string;
    variants: Record<string, string>;
    console?: unknown;
    resources?: unknown;
  };
  cog.version = `1.0.${++versions}`;
  if (nativeOnly) delete cog.variants['wasm32-wasi'];
  if (noConsole) delete cog.console;
  if (resources !== undefined) cog.resources = resources;
  writeFileSync(join(src, 'cog.json'), JSON.stringify(cog));
  const out = join(tempDir('heddle-cp-pkg-'), 'pkg');
  await buildCogPackage(src, out, { keys: [publisherKeys] });
  return out;
}

/** A running host. */
export interface TestHost {
  readonly keys: KeyPair;
  readonly service: HostService;
  server: WireServer;
  readonly url: string;
  readonly chain: Chain;
  /** Replaces the call handler (to lose answers, crash mid-call, ...); `undefined` restores it. */
  intercept(handler: ((real: CallHandler) => CallHandler) | undefined): void;
  /** Listens again on the same port after `server.close()` (a host that comes back). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

let hostSeeds = 0x10;
/** Starts a host on 127.0.0.1 with `routes`, trusting the publisher and authorising the controller. */
export async function startHost(
  routes: readonly ('native' | 'wasi')[] = ['native', 'wasi'],
  seed?: number,
  port = 0,
  options: Pick<HostServiceOptions, 'leaseMs' | 'supervisor' | 'onCall' | 'features' | 'now'> &
    Partial<Pick<HostServiceOptions, 'controllers'>> & {
      /** The host's data directory (default a new temporary one). */
      readonly dataDir?: string;
    } = {},
): Promise<TestHost> {
  const keys = keyPairFromSecret(new Uint8Array(32).fill(seed ?? ++hostSeeds));
  const { dataDir: givenDir, ...serviceOptions } = options;
  const dataDir = givenDir ?? tempDir('heddle-cp-host-');
  const chain = await openChainFile(join(dataDir, 'chain.jsonl'));
  const holder = new RevocationHolder({
    path: join(dataDir, 'revocations.json'),
    trustedKeys: [toHex(operatorKeys.publicKey)],
  });
  const gate = new Gate({ policy: OPEN_POLICY, recorder: chain, revocations: holder });
  const hosts = routes.map(
    (route) =>
      new WorkloadHost({
        runtime:
          route === 'native'
            ? new NativeRuntime({
                stateDir: join(dataDir, 'native'),
                dataRoot: join(dataDir, 'instances'),
                ...(process.getuid?.() === 0 ? { runAsUser: 'nobody' } : { allowHostUser: true }),
              })
            : new WasiRuntime({ dataRoot: join(dataDir, 'instances') }),
        gate,
        recorder: chain,
        agent: 'host',
        nodeTier: 'paired',
      }),
  );
  const service = new HostService({
    keys,
    controllers: new AllowListPolicy({ publicKeys: [controllerKeys.publicKey] }),
    anchors: testAnchors(),
    revocations: holder,
    routes: hosts,
    recorder: chain,
    dataDir,
    ...serviceOptions,
  });
  let wrap: ((real: CallHandler) => CallHandler) | undefined;
  const handler: CallHandler = (signed: SignedCtl, ctx) =>
    wrap === undefined ? service.handle(signed, ctx) : wrap(service.handler)(signed, ctx);
  const server = await WireServer.listen({ handler, port });
  const host: TestHost = {
    keys,
    service,
    server,
    url: server.url,
    chain,
    intercept: (h) => {
      wrap = h;
    },
    restart: async () => {
      host.server = await WireServer.listen({ handler, port: Number(new URL(host.url).port) });
    },
    close: async () => {
      await service.shutdown(500).catch(() => undefined);
      await host.server.close();
      await chain.close();
    },
  };
  return host;
}
