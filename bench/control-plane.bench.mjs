// @heddle/control-plane: placements per second through the whole stack (controller: verify, engine,
// gate, chain, SQLite; wire: signed call and package fetch; host: verify, gate, load) onto 10 hosts
// on loopback, versus bare signed status round trips to the same hosts in the same run.
// Imports the built packages: run `pnpm build` first. `--orders=N` (default 200).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { ControlPlane } from '@heddle/control-plane';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { Gate, parsePolicy } from '@heddle/gate';
import { HostService } from '@heddle/host-service';
import {
  buildCogPackage,
  NO_REVOCATIONS,
  RevocationHolder,
  RevocationList,
  TrustAnchors,
} from '@heddle/package';
import { AllowListPolicy, createRequest, signRequest } from '@heddle/protocol';
import { WasiRuntime, WorkloadHost } from '@heddle/runtime';
import { WireClient, WireServer } from '@heddle/wire';
import { report } from './harness.mjs';

const ORDERS = Number(process.argv.find((a) => a.startsWith('--orders='))?.slice(9) ?? 200);
const HOSTS = 10;
const CONCURRENCY = 4;
const controller = keyPairFromSecret(new Uint8Array(32).fill(0x91));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x92));
const anchors = new TrustAnchors([{ id: 'p', role: 'publisher', publicKey: toHex(publisher.publicKey) }]);
const policy = parsePolicy({
  version: 1,
  name: 'bench',
  rules: [
    {
      id: 'all',
      effect: 'permit',
      actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
  ],
});
const dir = mkdtempSync(join(tmpdir(), 'heddle-cp-bench-'));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function startHost(i) {
  const keys = keyPairFromSecret(new Uint8Array(32).fill(0x20 + i));
  const data = join(dir, `host-${i}`);
  mkdirSync(data, { recursive: true });
  const chain = await openChainFile(join(data, 'chain.jsonl'));
  const holder = new RevocationHolder(RevocationList.empty());
  const gate = new Gate({ policy, recorder: chain, revocations: holder });
  const service = new HostService({
    keys,
    controllers: new AllowListPolicy({ publicKeys: [controller.publicKey] }),
    anchors,
    revocations: holder,
    routes: [
      new WorkloadHost({
        runtime: new WasiRuntime({ dataRoot: join(data, 'instances') }),
        gate,
        recorder: chain,
        agent: 'h',
        nodeTier: 'paired',
      }),
    ],
    recorder: chain,
    dataDir: data,
  });
  const server = await WireServer.listen({ handler: service.handler });
  return { keys, service, server, chain };
}

async function packages() {
  const out = [];
  for (let i = 0; i < ORDERS; i++) {
    const src = join(dir, `src-${i}`);
    cpSync(new URL('../examples/wasi-cog', import.meta.url).pathname, src, { recursive: true });
    const cog = JSON.parse(readFileSync(join(src, 'cog.json'), 'utf8'));
    cog.version = `1.0.${i}`;
    writeFileSync(join(src, 'cog.json'), JSON.stringify(cog));
    await buildCogPackage(src, join(dir, `pkg-${i}`), { keys: [publisher] });
    out.push(join(dir, `pkg-${i}`));
  }
  return out;
}

try {
  const hosts = [];
  for (let i = 0; i < HOSTS; i++) hosts.push(await startHost(i));
  const pkgs = await packages();
  mkdirSync(join(dir, 'controller'), { recursive: true });
  const chain = await openChainFile(join(dir, 'controller', 'chain.jsonl'));
  const store = SqliteStateStore.open(join(dir, 'controller', 'state.db'));
  const plane = new ControlPlane({
    keys: controller,
    store,
    chain,
    gate: new Gate({ policy, recorder: chain }),
    anchors,
    revocations: NO_REVOCATIONS,
    stateDir: join(dir, 'controller'),
  });
  for (const h of hosts) await plane.addNode(h.server.url, { tier: 'paired' });

  // Baseline: signed status round trips, one connection per call (as the controller makes them).
  const client = new WireClient();
  const requester = nodeIdFromPublicKey(controller.publicKey);
  let rt = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      for (let i = w; i < ORDERS; i += CONCURRENCY) {
        const h = hosts[i % HOSTS];
        const signed = signRequest(
          createRequest({
            method: 'workload.status',
            requester,
            target: h.service.nodeId,
            body: {},
            now: Date.now(),
          }),
          controller,
        );
        await client.call(h.server.url, signed);
        rt++;
      }
    }),
  );
  const rtPerSec = rt / ((performance.now() - t0) / 1000);

  const latencies = [];
  let next = 0;
  const t1 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= ORDERS) return;
        const s = performance.now();
        const r = await plane.place({ package_dir: pkgs[i], start: false });
        if (r.status !== 'placed') throw new Error(`order ${i}: ${r.status}`);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const placesPerSec = ORDERS / ((performance.now() - t1) / 1000);
  const spread = new Map();
  for (const p of plane.instances()) spread.set(p.node_id, (spread.get(p.node_id) ?? 0) + 1);
  report(
    `placements through the whole stack: ${ORDERS} orders onto ${HOSTS} loopback hosts, ${CONCURRENCY} at a time`,
    [
      ['signed status round trips (baseline)', rtPerSec, 'calls/s'],
      ['placements (verify, decide, chain, fetch, load)', placesPerSec, 'places/s', placesPerSec / rtPerSec],
      ['place latency p50', pct(latencies, 0.5), 'ms'],
      ['place latency p99', pct(latencies, 0.99), 'ms'],
      [
        'instances on the busiest / quietest host',
        Math.max(...spread.values()),
        `/ ${Math.min(...spread.values())}`,
      ],
    ],
  );
  store.close();
  await chain.close();
  for (const h of hosts) {
    await h.server.close();
    await h.chain.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
