// heddle host service: place-to-running latency of a small native package through the whole host path
// (connect, signed call, fetch over the same connection, verify against the host's anchors, gate,
// load, start, signed answer), versus raw `child_process.spawn` of the same script until its first
// line, measured in the same run. Imports the built packages: run `pnpm build` first.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { Gate, parsePolicy } from '@heddle/gate';
import { HostService } from '@heddle/host-service';
import { buildCogPackage, RevocationHolder, RevocationList, TrustAnchors } from '@heddle/package';
import { AllowListPolicy, createRequest, signRequest } from '@heddle/protocol';
import { hostCogArch, NativeRuntime, WorkloadHost } from '@heddle/runtime';
import { DirPackageSource, WireServer, WireSession } from '@heddle/wire';
import { report } from './harness.mjs';

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 60);
const SCRIPT = '#!/bin/sh\necho up\nwhile :; do sleep 1; done\n';
const controller = keyPairFromSecret(new Uint8Array(32).fill(0x51));
const hostKeys = keyPairFromSecret(new Uint8Array(32).fill(0x52));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x53));
const HOST_ID = nodeIdFromPublicKey(hostKeys.publicKey);
const VARIANT = `${hostCogArch()}-native`;
const dir = mkdtempSync(join(tmpdir(), 'heddle-host-bench-'));
chmodSync(dir, 0o755);

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const sorted = (xs) => [...xs].sort((a, b) => a - b);

async function packages() {
  const out = [];
  for (let i = 0; i < ROUNDS; i++) {
    const src = join(dir, `src-${i}`);
    mkdirSync(join(src, 'bin'), { recursive: true });
    writeFileSync(join(src, 'bin', 'run.sh'), SCRIPT, { mode: 0o755 });
    writeFileSync(
      join(src, 'cog.json'),
      JSON.stringify({
        id: 'bench-cog',
        version: `1.0.${i}`,
        variants: { [VARIANT]: 'bin/run.sh' },
        resources: { cpu_pct: 1, ram_mb: 16 },
      }),
    );
    const built = await buildCogPackage(src, join(dir, `pkg-${i}`), { keys: [publisher] });
    out.push({ dir: join(dir, `pkg-${i}`), manifestHash: built.package.manifestHash });
  }
  return out;
}

function signed(method, body, n) {
  return signRequest(
    createRequest({
      method,
      requester: nodeIdFromPublicKey(controller.publicKey),
      target: HOST_ID,
      body,
      now: Date.now(),
      decisionId: n.toString(16).padStart(64, '0'),
    }),
    controller,
  );
}

async function rawSpawn() {
  const script = join(dir, 'raw.sh');
  writeFileSync(script, SCRIPT, { mode: 0o755 });
  const times = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const child = spawn(script, [], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((resolve) => child.stdout.once('data', resolve));
    times.push(performance.now() - t0);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  return sorted(times);
}

try {
  const pkgs = await packages();
  const chain = await openChainFile(join(dir, 'chain.jsonl'));
  const holder = new RevocationHolder(RevocationList.empty());
  const policy = parsePolicy({
    version: 1,
    name: 'bench',
    rules: [
      {
        id: 'all',
        effect: 'permit',
        actions: ['workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
        kinds: ['cog'],
        max_network: 'egress',
      },
    ],
  });
  const gate = new Gate({ policy, recorder: chain, revocations: holder });
  const runtime = new NativeRuntime({
    stateDir: join(dir, 'native'),
    dataRoot: join(dir, 'data', 'instances'),
    ...(process.getuid?.() === 0 ? { runAsUser: 'nobody' } : { allowHostUser: true }),
  });
  const service = new HostService({
    keys: hostKeys,
    controllers: new AllowListPolicy({ publicKeys: [controller.publicKey] }),
    anchors: new TrustAnchors([{ id: 'p', role: 'publisher', publicKey: toHex(publisher.publicKey) }]),
    revocations: holder,
    routes: [new WorkloadHost({ runtime, gate, recorder: chain, agent: 'host', nodeTier: 'paired' })],
    recorder: chain,
    dataDir: join(dir, 'data'),
  });
  const server = await WireServer.listen({ handler: service.handler });
  const placeTimes = [];
  const runningTimes = [];
  let n = 0;
  for (const pkg of pkgs) {
    const body = {
      name: 'bench-cog',
      manifest_hash: pkg.manifestHash,
      variant: VARIANT,
      config: { mode: { type: 'listener' }, values: {} },
      start: true,
    };
    const t0 = performance.now();
    const session = await WireSession.connect(server.url);
    const source = DirPackageSource.open(pkg.dir);
    const r = await session.call(signed('workload.place', body, ++n), {
      source,
      expectedPublicKey: hostKeys.publicKey,
    });
    placeTimes.push(performance.now() - t0);
    await source.close();
    // Running = the process printed its first line (what the raw baseline waits for too).
    const id = r.result.instance_id;
    for (;;) {
      const logs = await session.call(signed('workload.logs', { instance_id: id, lines: 1 }, ++n));
      if (logs.result.lines.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    runningTimes.push(performance.now() - t0);
    await session.call(signed('workload.stop', { instance_id: id, grace_ms: 200 }, ++n));
    await session.call(signed('workload.unload', { instance_id: id }, ++n));
    await session.close();
  }
  await server.close();
  await chain.close();
  const raw = await rawSpawn();
  const place = sorted(placeTimes);
  const running = sorted(runningTimes);
  report(
    `place to running, small native package, ${ROUNDS} places (each fetched, verified, loaded, started)`,
    [
      ['raw spawn to first line p50', pct(raw, 0.5), 'ms'],
      ['place answered (started) p50', pct(place, 0.5), 'ms', pct(place, 0.5) / pct(raw, 0.5)],
      ['place answered (started) p99', pct(place, 0.99), 'ms'],
      ['place to first output line p50', pct(running, 0.5), 'ms', pct(running, 0.5) / pct(raw, 0.5)],
      ['place to first output line p99', pct(running, 0.99), 'ms'],
      [
        'target: p50 under 200 ms',
        pct(running, 0.5) < 200 ? 1 : 0,
        pct(running, 0.5) < 200 ? '(met)' : '(NOT met)',
      ],
    ],
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
