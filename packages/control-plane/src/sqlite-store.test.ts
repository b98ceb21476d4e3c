import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StateError } from './errors.js';
import { SCHEMA_VERSION } from './migrations.js';
import { SqliteStateStore } from './sqlite-store.js';
import type { OrderRecord, PlacementRecord, TargetRecord, UnsettledRecord } from './state-store.js';

const root = mkdtempSync(join(tmpdir(), 'heddle-sqlite-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dbPath = (): string => join(root, `s${n++}`, 'state.db');

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const repoDir = fileURLToPath(new URL('../../..', import.meta.url));
const storeSrc = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));

const target = (id: string, over: Partial<TargetRecord> = {}): TargetRecord => ({
  node_id: id,
  url: `ws://127.0.0.1:7000/${id}`,
  public_key: 'a'.repeat(64),
  key_source: 'tofu',
  tier: 'paired',
  assigned_tier: 'paired',
  pending_key: null,
  routes: ['native', 'wasi'],
  facts: { payload: '{"node_id":"x"}', public_key: 'a'.repeat(64), signature: 'b'.repeat(128) },
  learned_at_ms: 1000,
  last_seen_ms: 2000,
  unreachable_since_ms: null,
  last_error: null,
  ...over,
});

const order = (id: string, over: Partial<OrderRecord> = {}): OrderRecord => ({
  order_id: id,
  workload: 'hello',
  version: '1.0.0',
  manifest_hash: 'c'.repeat(64),
  package_id: 'pkg-1',
  mode: { type: 'interval', secs: 30 },
  values: { greeting: 'hi', count: 3, loud: true, none: null },
  start: true,
  node: null,
  prefer: ['n1'],
  avoid: [],
  allow_emulated: false,
  migratable: true,
  created_at_ms: 5000,
  ...over,
});

const placement = (id: string, over: Partial<PlacementRecord> = {}): PlacementRecord => ({
  instance_id: id,
  node_id: 'n1',
  order_id: 'o-1',
  decision_id: 'd'.repeat(64),
  workload: 'hello',
  version: '1.0.0',
  variant: 'linux-x86_64',
  runtime: 'native',
  manifest_hash: 'c'.repeat(64),
  package_id: 'pkg-1',
  signer_keys: ['e'.repeat(64)],
  artifact_hashes: ['f'.repeat(64), '0'.repeat(64)],
  state: 'running',
  desired_running: true,
  placed_at_ms: 100,
  updated_at_ms: 100,
  replaces: null,
  reschedules: 0,
  ...over,
});

const unsettled = (id: string, over: Partial<UnsettledRecord> = {}): UnsettledRecord => ({
  decision_id: id,
  order_id: 'o-1',
  node_id: 'n1',
  expected_instance_id: null,
  variant: 'linux-x86_64',
  since_ms: 700,
  attempts: 0,
  last_error: 'timeout',
  ...over,
});

function stateError(fn: () => unknown): StateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StateError);
    return error as StateError;
  }
  throw new Error('expected a StateError');
}

/**
 * Runs a TypeScript child that uses the real store: one `node --import tsx` process (so a signal hits
 * the writer itself, not a wrapper), with @heddle/* mapped to the package sources.
 */
function spawnStoreChild(script: string): ChildProcess {
  const dir = mkdtempSync(join(root, 'child-'));
  const tsconfig = join(dir, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      compilerOptions: { baseUrl: repoDir, paths: { '@heddle/*': ['packages/*/src/index.ts'] } },
    }),
  );
  const file = join(dir, 'child.mts');
  writeFileSync(file, `import { SqliteStateStore } from ${JSON.stringify(storeSrc)};\n${script}`);
  const loader = pathToFileURL(join(repoDir, 'node_modules/tsx/dist/loader.mjs')).href;
  return spawn(process.execPath, ['--import', loader, file], {
    cwd: pkgDir,
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function lines(child: ChildProcess): { out: string[]; err: () => string; first: Promise<string> } {
  const out: string[] = [];
  let buf = '';
  let err = '';
  let resolveFirst: (line: string) => void = () => {};
  const first = new Promise<string>((r) => {
    resolveFirst = r;
  });
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    for (const p of parts) {
      out.push(p);
      resolveFirst(p);
    }
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  child.on('exit', () => resolveFirst(`exited: ${err}`));
  return { out, err: () => err, first };
}

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.on('exit', () => r());
  });

describe('SqliteStateStore records', () => {
  it('an explicit transaction while a group commit is open lands whole (no lost savepoint)', async () => {
    const file = dbPath();
    const s = SqliteStateStore.open(file);
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const group = s.grouped(async () => {
      s.putTarget(target('g1')); // opens the group's transaction, committed later
      await held;
    });
    // A write outside every group, in an explicit transaction, while the group's transaction is open.
    s.transaction(() => {
      s.putTarget(target('t1'));
      s.putTarget(target('t2'));
    });
    release();
    await group;
    await s.durable();
    s.close();
    const again = SqliteStateStore.open(file);
    expect(again.listTargets().map((t) => t.node_id)).toEqual(['g1', 't1', 't2']);
    again.close();
  });

  it('finds the targets at a URL without reading every record (targetIdsAt)', () => {
    const s = SqliteStateStore.open(dbPath());
    s.putTarget(target('n1', { url: 'ws://127.0.0.1:7001' }));
    s.putTarget(target('n2', { url: 'ws://127.0.0.1:7002' }));
    s.putTarget(target('n3', { url: 'ws://127.0.0.1:7001' }));
    expect(s.targetIdsAt('ws://127.0.0.1:7001')).toEqual(['n1', 'n3']);
    expect(s.targetIdsAt('ws://127.0.0.1:7002')).toEqual(['n2']);
    expect(s.targetIdsAt('ws://127.0.0.1:7003')).toEqual([]);
    s.removeTarget('n1');
    expect(s.targetIdsAt('ws://127.0.0.1:7001')).toEqual(['n3']);
    s.close();
  });

  it('round-trips targets: put, get, list, update in place, remove', () => {
    const s = SqliteStateStore.open(dbPath());
    expect(s.schemaVersion).toBe(SCHEMA_VERSION);
    expect(s.getTarget('n1')).toBeUndefined();
    s.putTarget(target('n2'));
    s.putTarget(target('n1', { facts: null, tier: null, pending_key: 'b'.repeat(64), last_seen_ms: null }));
    expect(s.getTarget('n2')).toEqual(target('n2'));
    expect(s.getTarget('n1')).toEqual(
      target('n1', { facts: null, tier: null, pending_key: 'b'.repeat(64), last_seen_ms: null }),
    );
    expect(s.listTargets().map((t) => t.node_id)).toEqual(['n1', 'n2']);
    s.putTarget(target('n2', { key_source: 'pinned', unreachable_since_ms: 9, last_error: 'refused' }));
    expect(s.listTargets()).toHaveLength(2);
    expect(s.getTarget('n2')).toEqual(
      target('n2', { key_source: 'pinned', unreachable_since_ms: 9, last_error: 'refused' }),
    );
    // The software a host reported (schema v4) is kept.
    const software = { name: 'heddle-host', version: '0.1.0' };
    s.putTarget(target('n2', { software }));
    expect(s.getTarget('n2')?.software).toEqual(software);
    expect(s.removeTarget('n2')).toBe(true);
    expect(s.removeTarget('n2')).toBe(false);
    expect(s.listTargets().map((t) => t.node_id)).toEqual(['n1']);
    s.close();
  });

  it('round-trips orders with every run mode and config value type', () => {
    const s = SqliteStateStore.open(dbPath());
    s.putOrder(order('o-2', { created_at_ms: 9 }));
    s.putOrder(order('o-1', { mode: { type: 'once' }, values: {}, node: 'n1', avoid: ['n2', 'n3'] }));
    expect(s.getOrder('o-2')).toEqual(order('o-2', { created_at_ms: 9 }));
    expect(s.listOrders().map((o) => o.order_id)).toEqual(['o-2', 'o-1']); // by created_at_ms
    s.putOrder(
      order('o-2', { mode: { type: 'listener' }, start: false, allow_emulated: true, created_at_ms: 9 }),
    );
    expect(s.getOrder('o-2')).toEqual(
      order('o-2', { mode: { type: 'listener' }, start: false, allow_emulated: true, created_at_ms: 9 }),
    );
    expect(s.listOrders()).toHaveLength(2);
    expect(s.removeOrder('o-1')).toBe(true);
    expect(s.removeOrder('o-1')).toBe(false);
    expect(s.getOrder('o-1')).toBeUndefined();
    s.close();
  });

  it('round-trips placements and unsettled records', () => {
    const s = SqliteStateStore.open(dbPath());
    s.putPlacement(placement('i-1'));
    expect(s.getPlacement('i-1')).toEqual(placement('i-1'));
    s.putPlacement(placement('i-1', { state: 'stopped', desired_running: false, updated_at_ms: 200 }));
    expect(s.listPlacements()).toEqual([
      placement('i-1', { state: 'stopped', desired_running: false, updated_at_ms: 200 }),
    ]);
    expect(s.removePlacement('i-1')).toBe(true);
    expect(s.removePlacement('i-1')).toBe(false);
    expect(s.getPlacement('i-1')).toBeUndefined();

    s.putUnsettled(unsettled('d-2', { since_ms: 800 }));
    s.putUnsettled(unsettled('d-1', { expected_instance_id: 'i-9' }));
    expect(s.getUnsettled('d-1')).toEqual(unsettled('d-1', { expected_instance_id: 'i-9' }));
    expect(s.listUnsettled().map((u) => u.decision_id)).toEqual(['d-1', 'd-2']);
    s.putUnsettled(unsettled('d-1', { attempts: 4, last_error: 'unreachable' }));
    expect(s.getUnsettled('d-1')).toEqual(unsettled('d-1', { attempts: 4, last_error: 'unreachable' }));
    expect(s.removeUnsettled('d-1')).toBe(true);
    expect(s.removeUnsettled('d-1')).toBe(false);
    expect(s.listUnsettled()).toHaveLength(1);
    s.close();
  });

  it('lists placements by node, ordered by placed_at_ms (then instance id)', () => {
    const s = SqliteStateStore.open(':memory:');
    s.putPlacement(placement('i-c', { node_id: 'n1', placed_at_ms: 30 }));
    s.putPlacement(placement('i-a', { node_id: 'n2', placed_at_ms: 20 }));
    s.putPlacement(placement('i-b', { node_id: 'n1', placed_at_ms: 10 }));
    s.putPlacement(placement('i-d', { node_id: 'n1', placed_at_ms: 30 }));
    s.putPlacement(placement('i-0', { node_id: 'n1', placed_at_ms: 30 }));
    expect(s.listPlacements().map((p) => p.instance_id)).toEqual(['i-b', 'i-a', 'i-0', 'i-c', 'i-d']);
    expect(s.listPlacements('n1').map((p) => p.instance_id)).toEqual(['i-b', 'i-0', 'i-c', 'i-d']);
    expect(s.listPlacements('n2').map((p) => p.instance_id)).toEqual(['i-a']);
    expect(s.listPlacements('n3')).toEqual([]);
    s.close();
  });

  it('refuses to write an invalid record, and stores nothing of it', () => {
    const s = SqliteStateStore.open(':memory:');
    const e = stateError(() => s.putPlacement(placement('i-1', { placed_at_ms: Number.NaN })));
    expect(e.code).toBe('corrupt');
    expect(e.field).toBe('placements.placed_at_ms');
    expect(stateError(() => s.putOrder(order('o-1', { mode: { type: 'bogus' } as never }))).code).toBe(
      'corrupt',
    );
    expect(s.listPlacements()).toEqual([]);
    expect(s.listOrders()).toEqual([]);
    s.close();
  });
});

describe('SqliteStateStore transactions and lifecycle', () => {
  it('rolls back every write of a transaction that throws, and commits one that returns', () => {
    const s = SqliteStateStore.open(dbPath());
    s.putTarget(target('n0'));
    expect(() =>
      s.transaction(() => {
        s.putTarget(target('n1'));
        s.putOrder(order('o-1'));
        s.putPlacement(placement('i-1'));
        s.removeTarget('n0');
        s.transaction(() => s.putUnsettled(unsettled('d-1'))); // joins the outer one
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(s.listTargets().map((t) => t.node_id)).toEqual(['n0']);
    expect(s.listOrders()).toEqual([]);
    expect(s.listPlacements()).toEqual([]);
    expect(s.listUnsettled()).toEqual([]);

    const out = s.transaction(() => {
      s.putOrder(order('o-1'));
      s.putPlacement(placement('i-1'));
      return 42;
    });
    expect(out).toBe(42);
    expect(s.getOrder('o-1')).toBeDefined();
    expect(s.getPlacement('i-1')).toBeDefined();

    // An inner transaction that throws and is caught undoes only its own writes.
    s.transaction(() => {
      s.putTarget(target('n5'));
      try {
        s.transaction(() => {
          s.putTarget(target('n6'));
          throw new Error('inner');
        });
      } catch {
        // the outer goes on
      }
    });
    expect(s.listTargets().map((t) => t.node_id)).toEqual(['n0', 'n5']);

    // A promise-returning function is refused (and rolled back): the store is synchronous.
    expect(() => s.transaction(() => Promise.resolve(s.putTarget(target('n7'))))).toThrow(/promise/);
    expect(s.getTarget('n7')).toBeUndefined();
    s.close();
  });

  it('keeps every write across close and reopen', () => {
    const path = dbPath();
    const a = SqliteStateStore.open(path);
    a.putTarget(target('n1'));
    a.putOrder(order('o-1'));
    a.transaction(() => {
      a.putPlacement(placement('i-1'));
      a.putUnsettled(unsettled('d-1'));
    });
    a.close();
    const b = SqliteStateStore.open(path);
    expect(b.getTarget('n1')).toEqual(target('n1'));
    expect(b.getOrder('o-1')).toEqual(order('o-1'));
    expect(b.getPlacement('i-1')).toEqual(placement('i-1'));
    expect(b.getUnsettled('d-1')).toEqual(unsettled('d-1'));
    b.close();
  });

  it('creates the file 0600 in a new directory 0700', () => {
    const path = join(root, 'fresh', 'deeper', 'state.db');
    const s = SqliteStateStore.open(path);
    s.putTarget(target('n1'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'fresh', 'deeper')).mode & 0o777).toBe(0o700);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    s.close();
  });

  it('throws closed on every call after close; closing twice is a no-op', () => {
    const s = SqliteStateStore.open(dbPath());
    s.close();
    s.close();
    const calls: (() => unknown)[] = [
      () => s.transaction(() => 1),
      () => s.getTarget('n1'),
      () => s.listTargets(),
      () => s.putTarget(target('n1')),
      () => s.removeTarget('n1'),
      () => s.getOrder('o'),
      () => s.listOrders(),
      () => s.putOrder(order('o')),
      () => s.removeOrder('o'),
      () => s.getPlacement('i'),
      () => s.listPlacements(),
      () => s.listPlacements('n1'),
      () => s.putPlacement(placement('i')),
      () => s.removePlacement('i'),
      () => s.getUnsettled('d'),
      () => s.listUnsettled(),
      () => s.putUnsettled(unsettled('d')),
      () => s.removeUnsettled('d'),
    ];
    for (const call of calls) expect(stateError(call).code).toBe('closed');
  });

  it('reports a corrupt row as StateError corrupt naming the table, key and column', () => {
    const path = dbPath();
    const s = SqliteStateStore.open(path);
    s.putPlacement(placement('i-1'));
    s.putPlacement(placement('i-2'));
    s.putTarget(target('n1'));
    s.close();
    const raw = new Database(path);
    raw.prepare("UPDATE placements SET signer_keys = '[\"e\", ' WHERE instance_id = 'i-2'").run();
    raw.prepare("UPDATE targets SET tier = 'god' WHERE node_id = 'n1'").run();
    raw.close();

    const t = SqliteStateStore.open(path);
    expect(t.getPlacement('i-1')).toEqual(placement('i-1'));
    const bad = stateError(() => t.getPlacement('i-2'));
    expect(bad.code).toBe('corrupt');
    expect(bad.message).toMatch(/placements.*i-2.*signer_keys/);
    expect(bad.field).toBe('placements.signer_keys');
    expect(stateError(() => t.listPlacements()).code).toBe('corrupt');
    const tier = stateError(() => t.listTargets());
    expect(tier.code).toBe('corrupt');
    expect(tier.message).toMatch(/targets.*n1/);
    expect(tier.field).toBe('targets.tier');
    // The store stays usable: the bad row can be overwritten or removed.
    t.putPlacement(placement('i-2'));
    expect(t.listPlacements()).toHaveLength(2);
    t.close();
  });
});

describe('SqliteStateStore across processes', () => {
  it('holds the file while open: another process can neither read nor write; a second store is refused', async () => {
    const path = dbPath();
    const s = SqliteStateStore.open(path);
    s.putTarget(target('n1'));
    const probe = `
      const D = require('better-sqlite3');
      const db = new D(${JSON.stringify(path)}, { timeout: 150 });
      const r = (f) => { try { return f(); } catch (e) { return e.code; } };
      console.log(JSON.stringify({
        read: r(() => db.prepare('SELECT count(*) AS c FROM targets').get().c),
        write: r(() => db.prepare("DELETE FROM targets").run().changes),
      }));`;
    const held = JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: pkgDir }).toString());
    expect(held).toEqual({ read: 'SQLITE_BUSY', write: 'SQLITE_BUSY' });
    // The same from within this process: a second store on the file waits, then is refused.
    const second = stateError(() => SqliteStateStore.open(path, { busyTimeoutMs: 100 }));
    expect(second.code).toBe('io');
    expect(second.message).toMatch(/locked/);
    s.putTarget(target('n2'));
    s.close();
    // Once closed, the other process gets in (and sees both writes).
    const after = JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: pkgDir }).toString());
    expect(after).toEqual({ read: 2, write: 2 });
  });

  it('refuses to open while a child process holds the store, and opens once it is gone', async () => {
    const path = dbPath();
    const child = spawnStoreChild(`
      const s = SqliteStateStore.open(${JSON.stringify(path)});
      console.log('held');
      process.stdin.on('end', () => { s.close(); process.exit(0); });
      process.stdin.resume();`);
    const out = lines(child);
    try {
      expect(await out.first).toBe('held');
      const e = stateError(() => SqliteStateStore.open(path, { busyTimeoutMs: 100 }));
      expect(e.code).toBe('io');
      expect(e.message).toMatch(/locked/);
    } finally {
      child.stdin?.end();
      await exited(child);
    }
    expect(child.exitCode).toBe(0);
    const s = SqliteStateStore.open(path);
    expect(s.listTargets()).toEqual([]);
    s.close();
  });

  it('after kill -9 mid-loop, reopening finds exactly the acknowledged prefix (give or take the one in flight)', async () => {
    const path = dbPath();
    for (let round = 0; round < 2; round++) {
      const child = spawnStoreChild(`
        const s = SqliteStateStore.open(${JSON.stringify(path)});
        let i = s.listPlacements().length;
        console.log('start ' + i);
        for (;;) {
          const id = 'p-' + String(i).padStart(6, '0');
          s.transaction(() => {
            s.putPlacement({
              instance_id: id, node_id: 'n' + (i % 3), order_id: 'o-' + i, decision_id: 'd-' + i,
              workload: 'w', version: '1.0.0', variant: 'v', runtime: 'native', manifest_hash: 'm-' + i,
              package_id: 'pkg', signer_keys: ['k-' + i], artifact_hashes: ['a-' + i, 'b-' + i],
              state: 'running', desired_running: true, placed_at_ms: i, updated_at_ms: i,
            });
            s.putOrder({
              order_id: 'o-' + i, workload: 'w', version: '1.0.0', manifest_hash: 'm-' + i, package_id: 'pkg',
              mode: { type: 'once' }, values: { i }, start: true, node: null, prefer: [], avoid: [],
              allow_emulated: false, migratable: true, created_at_ms: i,
            });
          });
          process.stdout.write('ack ' + i + '\\n');
          i++;
        }`);
      const out = lines(child);
      try {
        const start = await out.first;
        expect(start, out.err()).toMatch(/^start \d+$/);
        await new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 300)));
      } finally {
        child.kill('SIGKILL');
        await exited(child);
      }
      const from = Number(out.out[0]?.split(' ')[1]);
      expect(child.signalCode).toBe('SIGKILL');
      const acked = out.out.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)));
      expect(acked.length).toBeGreaterThan(0);
      expect(acked).toEqual(acked.map((_, k) => from + k));
      const ackedCount = from + acked.length;

      const s = SqliteStateStore.open(path);
      const rows = s.listPlacements(); // every row is validated on the way out
      expect(rows.length === ackedCount || rows.length === ackedCount + 1).toBe(true);
      rows.forEach((p, i) => {
        expect(p.instance_id).toBe(`p-${String(i).padStart(6, '0')}`);
        expect(p.artifact_hashes).toEqual([`a-${i}`, `b-${i}`]);
        expect(s.getOrder(`o-${i}`)?.values).toEqual({ i }); // both writes of a transaction, or neither
      });
      expect(s.listOrders()).toHaveLength(rows.length);
      s.close();
    }
  });
});
