// The PostgreSQL state store (issue 22) against SQLite, in the same run: places through the
// control-plane library (package verified once and held, engine, gate checks, chained decision,
// attempt and lifecycle records on a file chain) onto nodes of an in-process driver (no network),
// once with the state in SQLite (the baseline: WAL, synchronous = FULL, group commit) and once in a
// real PostgreSQL server (started from the machine's binaries on 127.0.0.1, as the tests do; every
// store call one loopback round trip through the synchronous facade, no group commit). Also the raw
// store-op round trips (get, put, a two-write transaction) on both. Imports the built packages: run
// `pnpm build` first. Both stores are durable when a write returns (PostgreSQL with fsync on).
//   --places=N       places measured on each store (default 1,000)
//   --nodes=N        in-process nodes (default 100)
//   --concurrency=N  places in flight (default 32)
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChainFile } from '@heddle/chain';
import { ControlPlane } from '@heddle/control-plane';
import { PostgresStateStore } from '@heddle/control-plane/postgres';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { findPostgresBin, startPostgres } from '@heddle/control-plane/testing';
import { Gate } from '@heddle/gate';
import { buildCogPackage, NO_REVOCATIONS } from '@heddle/package';
import { report } from './harness.mjs';
import { anchors, controller, InProcessDriver, nodeId, policy, publisher } from './in-process-plane.mjs';

const arg = (name, dflt) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const PLACES = arg('places', 1_000);
const NODES = arg('nodes', 100);
const CONCURRENCY = arg('concurrency', 32);

if (findPostgresBin() === undefined) {
  console.log('pg-store: skipped (no PostgreSQL server binaries: apt-get install postgresql)');
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'heddle-pg-bench-'));

async function openPlane(name, store) {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  const chain = await openChainFile(join(d, 'chain.jsonl'));
  const plane = new ControlPlane({
    keys: controller,
    store,
    chain,
    gate: new Gate({ policy, recorder: chain }),
    anchors,
    revocations: NO_REVOCATIONS,
    stateDir: d,
    drivers: [new InProcessDriver()],
  });
  for (let i = 0; i < NODES; i++) await plane.addNodeOf('sim', `sim://${nodeId(i)}`, { tier: 'paired' });
  return { plane, store, chain };
}

/** Places `count` instances (`values.n` from `from`), `CONCURRENCY` in flight; returns places/s. */
async function placeMany(plane, manifest, count, from) {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const r = await plane.place({ manifest_hash: manifest, values: { n: from + i }, start: true });
        if (r.status !== 'placed') throw new Error(`place ${i}: ${r.status}`);
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

/** Places per second on `store` (after a warm-up of 100). */
async function placeRate(name, store, pkg) {
  const p = await openPlane(name, store);
  const first = await p.plane.place({ package_dir: pkg, values: { n: -1 }, start: true });
  const manifest = first.instance.manifest_hash;
  await placeMany(p.plane, manifest, 100, 0);
  const rate = await placeMany(p.plane, manifest, PLACES, 1_000_000);
  const held = p.store.listPlacements().length;
  if (held !== PLACES + 101) throw new Error(`${name}: ${held} placements held, expected ${PLACES + 101}`);
  p.store.close();
  await p.chain.close();
  return rate;
}

/** Store operations per second for about `ms` (the store is synchronous: one call at a time). */
function opsPerSecond(fn, ms = 1000) {
  for (let i = 0; i < 50; i++) fn(i);
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) fn(n++);
  return n / ((performance.now() - t0) / 1000);
}

const placement = (i) => ({
  instance_id: `i-${i}`,
  node_id: 'n1',
  order_id: 'o-1',
  decision_id: 'd'.repeat(64),
  workload: 'w',
  version: '1.0.0',
  variant: 'v',
  runtime: 'wasi',
  manifest_hash: 'c'.repeat(64),
  package_id: 'p',
  signer_keys: ['e'.repeat(64)],
  artifact_hashes: ['f'.repeat(64)],
  state: 'running',
  desired_running: true,
  placed_at_ms: i,
  updated_at_ms: i,
});

function rawOps(store) {
  store.putPlacement({ ...placement(0), instance_id: 'i-probe' });
  return {
    get: opsPerSecond(() => store.getPlacement('i-probe')),
    put: opsPerSecond((i) => store.putPlacement(placement(i % 500))),
    tx: opsPerSecond((i) =>
      store.transaction(() => {
        store.putPlacement(placement(i % 500));
        store.putPlacement(placement((i + 1) % 500));
      }),
    ),
  };
}

const pg = await startPostgres({ database: 'bench', durable: true });
try {
  const pkg = join(dir, 'pkg');
  await buildCogPackage(new URL('../examples/wasi-cog', import.meta.url).pathname, pkg, {
    keys: [publisher],
  });

  const sqliteRate = await placeRate('sqlite', SqliteStateStore.open(join(dir, 'sqlite-state.db')), pkg);
  const pgRate = await placeRate('postgres', PostgresStateStore.open(pg.url), pkg);

  const sqliteRaw = SqliteStateStore.open(join(dir, 'raw.db'));
  const s = rawOps(sqliteRaw);
  sqliteRaw.close();
  const pgRaw = PostgresStateStore.open(await pg.createDatabase('raw'));
  const p = rawOps(pgRaw);
  pgRaw.close();

  report(
    `state store: ${PLACES.toLocaleString('en-US')} places onto ${NODES} in-process nodes, ${CONCURRENCY} in flight; PostgreSQL on 127.0.0.1 (fsync on, synchronous_commit on: durable like SQLite's synchronous = FULL)`,
    [
      ['places, SQLite state (baseline)', sqliteRate, 'places/s'],
      ['places, PostgreSQL state', pgRate, 'places/s', pgRate / sqliteRate],
      ['getPlacement, SQLite (baseline)', s.get, 'ops/s'],
      ['getPlacement, PostgreSQL', p.get, 'ops/s', p.get / s.get],
      ['putPlacement, SQLite (baseline)', s.put, 'ops/s'],
      ['putPlacement, PostgreSQL', p.put, 'ops/s', p.put / s.put],
      ['transaction of 2 puts, SQLite (baseline)', s.tx, 'ops/s'],
      ['transaction of 2 puts, PostgreSQL', p.tx, 'ops/s', p.tx / s.tx],
      ['PostgreSQL round trip (1 / get rate)', 1e6 / p.get, 'µs'],
    ],
  );
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
