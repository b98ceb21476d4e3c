// Controller recovery (issue 8): how long a restarted controller takes to come back with N placements
// (default 10,000) on 100 nodes in its SQLite state: open the store (schema check, WAL), build the
// ControlPlane (reservations restored from the held packages), and run the first lifecycle tick with
// every node unreachable (they come back as unreachable until re-described). Baseline in the same run:
// reading the same placement rows with a bare better-sqlite3 `SELECT` and `JSON.parse` of each.
// Imports the built packages: run `pnpm build` first. `--placements=N`, `--nodes=M`.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { ControlPlane } from '@heddle/control-plane';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { keyPairFromSecret, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { Gate, parsePolicy } from '@heddle/gate';
import { buildCogPackage, NO_REVOCATIONS, TrustAnchors, VerifiedPackageStore } from '@heddle/package';
import { report } from './harness.mjs';

const arg = (name, dflt) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const PLACEMENTS = arg('placements', 10_000);
const NODES = arg('nodes', 100);
const Database = createRequire(new URL('../packages/control-plane/package.json', import.meta.url))(
  'better-sqlite3',
);
const controller = keyPairFromSecret(new Uint8Array(32).fill(0x61));
const publisher = keyPairFromSecret(new Uint8Array(32).fill(0x62));
const anchors = new TrustAnchors([{ id: 'p', role: 'publisher', publicKey: toHex(publisher.publicKey) }]);
const policy = parsePolicy({
  version: 1,
  name: 'bench',
  rules: [
    { id: 'all', effect: 'permit', actions: ['workload.place'], kinds: ['cog'], max_network: 'egress' },
  ],
});
const dir = mkdtempSync(join(tmpdir(), 'heddle-recovery-bench-'));
const stateDir = join(dir, 'controller');
mkdirSync(stateDir, { recursive: true });

try {
  // One signed package held by the controller, as `place` would have left it.
  const src = join(dir, 'src');
  cpSync(new URL('../examples/wasi-cog', import.meta.url).pathname, src, { recursive: true });
  const cog = JSON.parse(readFileSync(join(src, 'cog.json'), 'utf8'));
  writeFileSync(join(src, 'cog.json'), JSON.stringify(cog));
  await buildCogPackage(src, join(dir, 'pkg'), { keys: [publisher] });
  const held = await new VerifiedPackageStore({
    dir: join(stateDir, 'packages'),
    anchors,
    revocations: NO_REVOCATIONS,
  }).add(join(dir, 'pkg'));

  // The state a controller with PLACEMENTS running instances on NODES nodes leaves behind.
  const store = SqliteStateStore.open(join(stateDir, 'state.db'));
  const now = Date.now();
  const nodes = Array.from({ length: NODES }, (_, i) => {
    const keys = keyPairFromSecret(new Uint8Array(32).fill(1).map((v, j) => (j === 0 ? i : v)));
    return { id: nodeIdFromPublicKey(keys.publicKey), key: toHex(keys.publicKey) };
  });
  store.transaction(() => {
    for (const [i, n] of nodes.entries()) {
      store.putTarget({
        node_id: n.id,
        // Nothing listens there: every node is unreachable after the restart.
        url: `ws://127.0.0.1:${1 + i}/`,
        public_key: n.key,
        key_source: 'tofu',
        tier: 'paired',
        assigned_tier: 'paired',
        pending_key: null,
        routes: ['wasi'],
        facts: null,
        learned_at_ms: now,
        last_seen_ms: now,
        unreachable_since_ms: null,
        last_error: null,
        seed: null,
      });
    }
    store.putOrder({
      order_id: 'o-0000000000000000',
      workload: held.body.id,
      version: held.body.version,
      manifest_hash: held.manifestHash,
      package_id: held.packageId,
      mode: { type: 'listener' },
      values: {},
      start: true,
      node: null,
      prefer: [],
      avoid: [],
      allow_emulated: false,
      migratable: true,
      created_at_ms: now,
      store_pin: null,
    });
    for (let i = 0; i < PLACEMENTS; i++) {
      store.putPlacement({
        instance_id: `i-${i.toString(16).padStart(16, '0')}`,
        node_id: nodes[i % NODES].id,
        order_id: 'o-0000000000000000',
        decision_id: i.toString(16).padStart(64, '0'),
        workload: held.body.id,
        version: held.body.version,
        variant: 'wasm32-wasi',
        runtime: 'wasi',
        manifest_hash: held.manifestHash,
        package_id: held.packageId,
        signer_keys: [toHex(publisher.publicKey)],
        artifact_hashes: [],
        state: 'running',
        desired_running: true,
        placed_at_ms: now,
        updated_at_ms: now,
      });
    }
  });
  store.close();

  // Baseline: the rows alone, read with the bare driver (loaded once before, like the store was).
  new Database(':memory:').close();
  const t0 = performance.now();
  const db = new Database(join(stateDir, 'state.db'), { readonly: true });
  const rows = db.prepare('SELECT * FROM placements').all();
  let parsed = 0;
  for (const r of rows) parsed += Object.keys(JSON.parse(JSON.stringify(r))).length > 0 ? 1 : 0;
  db.close();
  const baselineMs = performance.now() - t0;

  // The restart.
  const t1 = performance.now();
  const reopened = SqliteStateStore.open(join(stateDir, 'state.db'));
  const openMs = performance.now() - t1;
  const chain = await openChainFile(join(stateDir, 'chain.jsonl'));
  const t2 = performance.now();
  const plane = new ControlPlane({
    keys: controller,
    store: reopened,
    chain,
    gate: new Gate({ policy, recorder: chain }),
    anchors,
    revocations: NO_REVOCATIONS,
    stateDir,
    config: { callTimeoutMs: 2_000 },
  });
  const buildMs = performance.now() - t2;
  const t3 = performance.now();
  await plane.tick();
  const tickMs = performance.now() - t3;
  const total = performance.now() - t1;
  const listed = plane.instances().length;
  if (listed !== PLACEMENTS || parsed !== PLACEMENTS)
    throw new Error(`expected ${PLACEMENTS}, got ${listed}`);
  const unreachable = plane.nodes().filter((n) => n.reachable === false || n.unreachable_since_ms !== null);
  report(`controller restart with ${PLACEMENTS.toLocaleString('en-US')} placements on ${NODES} nodes`, [
    ['bare SELECT of the placement rows (baseline)', baselineMs, 'ms'],
    ['open the state store', openMs, 'ms'],
    ['build the control plane (reservations restored)', buildMs, 'ms'],
    ['first lifecycle tick (every node unreachable)', tickMs, 'ms'],
    ['restart to first tick done', total, 'ms', total / baselineMs],
    ['nodes unreachable after the tick', unreachable.length, `of ${NODES}`],
  ]);
  reopened.close();
  await chain.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
