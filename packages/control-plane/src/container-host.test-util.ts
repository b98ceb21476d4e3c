// A host with the container route for this package's tests (not exported from the package): a real
// HostService behind a real WebSocket server, whose ContainerRuntime drives the runtime package's
// FAKE container engine (a script following the docker CLI reference; containers are real child
// processes). The engine is amd64 and emulates aarch64, and holds one arm64 image, so an
// `aarch64-container` cog runs there only emulated.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { AllowListPolicy, keyPairFromSecret, toHex } from '@heddle/envelope';
import { Gate, parsePolicy } from '@heddle/gate';
import { HostService, RevocationHolder } from '@heddle/host-service';
import { buildCogPackage } from '@heddle/package';
import { ContainerRuntime, WorkloadHost } from '@heddle/runtime';
import { fakeEnginePath } from '@heddle/runtime/testing';
import { WireServer } from '@heddle/wire';
import { controllerKeys, operatorKeys, publisherKeys, tempDir, testAnchors } from './test-fixtures.js';

/** The one image the fake engine holds (arm64). */
export const ARM64_IMAGE: string = `registry.example/heddle/ctr-cog@sha256:${'c'.repeat(64)}`;

const FAKE_ENGINE = fakeEnginePath();

/** A running container host. */
export interface ContainerHost {
  readonly url: string;
  readonly nodeId: string;
  close(): Promise<void>;
}

/** Starts the container host (its own gate permits emulated containers with no network). */
export async function startContainerHost(): Promise<ContainerHost> {
  const keys = keyPairFromSecret(new Uint8Array(32).fill(0x6c));
  const dataDir = tempDir('heddle-cp-ctr-');
  const engineState = join(dataDir, 'engine');
  mkdirSync(engineState);
  writeFileSync(
    join(engineState, 'images.json'),
    JSON.stringify({
      [ARM64_IMAGE]: {
        Architecture: 'arm64',
        Os: 'linux',
        Entrypoint: ['node', '-e', 'setInterval(() => {}, 1000)', '--'],
        Env: ['PATH=/usr/local/bin:/usr/bin:/bin'],
      },
    }),
  );
  const chain = await openChainFile(join(dataDir, 'chain.jsonl'));
  const holder = new RevocationHolder({
    path: join(dataDir, 'revocations.json'),
    trustedKeys: [toHex(operatorKeys.publicKey)],
  });
  const policy = parsePolicy({
    version: 1,
    name: 'container-host',
    rules: [{ id: 'all', effect: 'permit', actions: ['workload.*'], kinds: ['cog'], emulated: true }],
  });
  const host = new WorkloadHost({
    runtime: new ContainerRuntime({
      engine: FAKE_ENGINE,
      engineEnv: { FAKE_ENGINE_STATE: engineState },
      emulatedArches: ['aarch64'],
      dataRoot: join(dataDir, 'instances'),
    }),
    gate: new Gate({ policy, recorder: chain, revocations: holder }),
    recorder: chain,
    agent: 'host',
    nodeTier: 'paired',
  });
  const service = new HostService({
    keys,
    controllers: new AllowListPolicy({ publicKeys: [controllerKeys.publicKey] }),
    anchors: testAnchors(),
    revocations: holder,
    routes: [host],
    recorder: chain,
    dataDir,
  });
  const server = await WireServer.listen({ handler: (signed, ctx) => service.handle(signed, ctx) });
  return {
    url: server.url,
    nodeId: service.nodeId,
    close: async () => {
      await service.shutdown(500).catch(() => undefined);
      await server.close();
      await chain.close();
    },
  };
}

/** A cog with one `aarch64-container` variant (the arm64 image), built and signed by the publisher. */
export async function containerPackage(): Promise<string> {
  const src = tempDir('heddle-cp-ctr-src-');
  mkdirSync(join(src, 'images'));
  writeFileSync(join(src, 'images', 'aarch64-container.json'), JSON.stringify({ image: ARM64_IMAGE }));
  writeFileSync(
    join(src, 'cog.json'),
    JSON.stringify({
      id: 'ctr-cog',
      version: '1.0.0',
      variants: { 'aarch64-container': 'images/aarch64-container.json' },
      config: {},
      console: [],
      resources: { cpu_pct: 10, ram_mb: 16 },
    }),
  );
  const out = join(tempDir('heddle-cp-ctr-pkg-'), 'pkg');
  await buildCogPackage(src, out, { keys: [publisherKeys] });
  return out;
}
