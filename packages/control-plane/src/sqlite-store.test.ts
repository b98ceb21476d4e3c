import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStateStore } from './sqlite-store.js';
import {
  describeStateStoreContract,
  exited,
  lines,
  type StoreFixture,
  spawnStoreChild,
  stateError,
  target,
} from './state-store-contract.test-util.js';

const root = mkdtempSync(join(tmpdir(), 'heddle-sqlite-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dbPath = (): string => join(root, `s${n++}`, 'state.db');

const pkgDir = fileURLToPath(new URL('..', import.meta.url));

/** The SQLite store under the shared StateStore contract: a file per test. */
const sqliteFixture = (): StoreFixture => ({
  fresh: () => {
    const path = dbPath();
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return path;
  },
  open: (path) => SqliteStateStore.open(path),
  raw: (path, sql) => {
    const db = new Database(path);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
  },
  child: {
    module: fileURLToPath(new URL('./sqlite-store.ts', import.meta.url)),
    exportName: 'SqliteStateStore',
    openExpr: (path) => `SqliteStateStore.open(${JSON.stringify(path)})`,
  },
});

describeStateStoreContract('SqliteStateStore', sqliteFixture);

describe('SqliteStateStore group commit', () => {
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
});

describe('SqliteStateStore files', () => {
  it('creates the file 0600 in a new directory 0700', () => {
    const path = join(root, 'fresh', 'deeper', 'state.db');
    const s = SqliteStateStore.open(path);
    s.putTarget(target('n1'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'fresh', 'deeper')).mode & 0o777).toBe(0o700);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    s.close();
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
    const child = spawnStoreChild(
      sqliteFixture(),
      `
      const s = SqliteStateStore.open(${JSON.stringify(path)});
      console.log('held');
      process.stdin.on('end', () => { s.close(); process.exit(0); });
      process.stdin.resume();`,
    );
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
});
