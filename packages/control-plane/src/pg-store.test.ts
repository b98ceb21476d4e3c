import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateError } from './errors.js';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';
import { PG_MIGRATIONS } from './pg-migrations.js';
import { PostgresStateStore } from './pg-store.js';
import { SyncPg } from './pg-sync.js';
import { SqliteStateStore } from './sqlite-store.js';
import { copyState, countState } from './state-copy.js';
import {
  describeStateStoreContract,
  JOB,
  jobInstance,
  jobVersion,
  order,
  placement,
  STATE_TABLES,
  type StoreFixture,
  stateError,
  target,
} from './state-store-contract.test-util.js';
import { findPostgresBin, postgresSkipReason, startPostgres, type TestPostgres } from './test-postgres.js';

const skip = postgresSkipReason();
let pg: TestPostgres | undefined;
let n = 0;

beforeAll(async () => {
  if (skip === undefined) pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

function server(): TestPostgres {
  if (pg === undefined) throw new Error('no test server');
  return pg;
}

/** Resolves once process `pid` no longer exists (at most 10 s). */
async function gone(pid: number): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > until) throw new Error(`process ${pid} still runs`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs raw SQL on a database (its own connection, closed after). */
function rawSql(url: string, sql: string): void {
  const db = new SyncPg({ connectionString: url });
  try {
    db.query(sql);
  } finally {
    db.close();
  }
}

/** The PostgreSQL store under the shared StateStore contract: a fresh database per test on one server. */
const pgFixture = (): StoreFixture => ({
  fresh: () => server().createDatabase(`contract_${n++}`),
  open: (url) => PostgresStateStore.open(url),
  raw: rawSql,
  child: {
    module: fileURLToPath(new URL('./pg-store.ts', import.meta.url)),
    exportName: 'PostgresStateStore',
    openExpr: (url) => `PostgresStateStore.open(${JSON.stringify(url)})`,
  },
});

describe.skipIf(skip !== undefined)('PostgresStateStore (a real PostgreSQL server)', () => {
  describeStateStoreContract('PostgresStateStore', pgFixture);

  describe('schema', () => {
    it('has a step for every SQLite schema version, with the same numbers and descriptions', () => {
      expect(PG_MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(PG_MIGRATIONS.map((m) => m.description)).toEqual(MIGRATIONS.map((m) => m.description));
    });

    it('creates every table on an empty database and records the version; controllers opening at once migrate once', async () => {
      const url = await server().createDatabase(`schema_${n++}`);
      // Two stores opening the same empty database: the advisory lock makes the second wait and find the work done.
      const a = PostgresStateStore.open(url);
      const b = PostgresStateStore.open(url);
      expect([a.schemaVersion, b.schemaVersion]).toEqual([SCHEMA_VERSION, SCHEMA_VERSION]);
      const tables = a
        .query('SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename')
        .rows.map((r) => r.tablename);
      expect(tables).toEqual(STATE_TABLES);
      expect(a.query("SELECT value FROM meta WHERE key = 'schema_version'").rows).toEqual([
        { value: String(SCHEMA_VERSION) },
      ]);
      a.close();
      b.close();
    });
  });

  describe('copying a state (heddle state migrate)', () => {
    it('copies every kind of record from SQLite, one of each table, and counts the same on both sides', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'heddle-copy-'));
      const from = SqliteStateStore.open(join(dir, 'state.db'));
      from.putTarget(target('n1'));
      from.putNodeMeta({ node_id: 'n1', cordoned: true, labels: { room: 'k' }, updated_at_ms: 1 });
      from.putOrder(order('o-1'));
      from.putPlacement(placement('i-1', { ram_mb: 64, cpu_pct: 10 }));
      from.putPlaceClaim({
        claim_id: 'pc-1',
        node_id: 'n1',
        order_id: 'o-1',
        instance_id: 'i-2',
        ram_mb: 64,
        cpu_pct: 10,
        claimed_by: 'c',
        claimed_at_ms: 1,
      });
      from.putUnsettled({
        decision_id: 'd-1',
        order_id: 'o-1',
        node_id: 'n1',
        expected_instance_id: null,
        variant: 'v',
        since_ms: 1,
        attempts: 0,
        last_error: 'x',
        ram_mb: 64,
        cpu_pct: 10,
      });
      from.putReschedule({
        instance_id: 'i-1',
        order_id: 'o-1',
        node_id: 'n1',
        avoid: [],
        reschedules: 1,
        attempts: 0,
        next_at_ms: 1,
        since_ms: 1,
        decision_id: null,
        last_error: null,
      });
      from.putAlert({
        alert_id: 'al-1',
        instance_id: 'i-1',
        node_id: 'n1',
        order_id: 'o-1',
        reason: 'pinned',
        detail: 'x',
        raised_at_ms: 1,
        acked_at_ms: null,
      });
      from.putRevocationAck({ node_id: 'n1', generation: 1, acked_at_ms: 1, last_error: null });
      from.putRevocationList({
        name: 'current',
        generation: 1,
        list: { schema: 'heddle.revocation-list.v1', generation: 1, entries: [] },
        stored_at_ms: 1,
      });
      from.putJob(JOB);
      from.putJobVersion(jobVersion('web', 1));
      from.putJobVersion(jobVersion('gone', 1)); // a removed job's version is copied too
      from.putJobInstance(jobInstance('i-1', 'web', 1));
      from.putIdempotencyKey({
        key: 'k',
        fingerprint: 'f',
        order_id: 'o-1',
        result: null,
        created_at_ms: 1,
        claimed_by: 'c/1',
        claimed_at_ms: 1,
      });
      from.putMeta('state_seq', '9');
      const to = PostgresStateStore.open(await server().createDatabase(`copy_${n++}`));
      try {
        const counts = copyState(from, to);
        // Every table of the PostgreSQL schema is a kind the copy knows (meta: its application values).
        const tables = to
          .query('SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename')
          .rows.map((r) => String(r.tablename));
        expect(Object.keys(counts).sort()).toEqual(tables);
        // One of each (two job versions), on both sides.
        expect(Object.values(counts).every((c) => c >= 1)).toBe(true);
        expect(countState(to)).toEqual(countState(from));
        expect(to.listAllJobVersions()).toEqual(from.listAllJobVersions());
        expect(to.getPlacement('i-1')).toEqual(from.getPlacement('i-1'));
        expect(to.getUnsettled('d-1')).toEqual(from.getUnsettled('d-1'));
        expect(to.listPlaceClaims()).toEqual(from.listPlaceClaims());
        expect(to.getRevocationList()).toEqual(from.getRevocationList());
        expect(to.getMeta('state_seq')).toBe('9');
        // A target that holds a state is emptied by clearAll (heddle state migrate --force).
        to.clearAll();
        expect(Object.values(countState(to)).every((c) => c === 0)).toBe(true);
      } finally {
        to.close();
        from.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });

  describe('backup and restore', () => {
    it('a pg_dump restored with pg_restore into an empty database opens with every record (the operator guide path)', async () => {
      const url = await server().createDatabase(`backup_${n++}`);
      const a = PostgresStateStore.open(url);
      a.putTarget(target('n1'));
      a.putOrder(order('o-1'));
      a.putPlacement(placement('i-1'));
      a.putMeta('state_seq', '7');
      const bin = findPostgresBin() ?? '';
      const dir = mkdtempSync(join(tmpdir(), 'heddle-pg-dump-'));
      const env = { ...process.env, PGPASSWORD: server().password };
      const conn = ['-h', '127.0.0.1', '-p', String(server().port), '-U', 'heddle'];
      try {
        const dump = join(dir, 'state.dump');
        // While the store is open (a dump is a consistent snapshot).
        execFileSync(join(bin, 'pg_dump'), [...conn, '-Fc', '-d', url.split('/').pop() ?? '', '-f', dump], {
          env,
          stdio: 'pipe',
        });
        a.putTarget(target('n2')); // after the dump: not in the restore
        a.close();
        const restored = await server().createDatabase(`restored_${n++}`);
        execFileSync(
          join(bin, 'pg_restore'),
          [...conn, '--no-owner', '-d', restored.split('/').pop() ?? '', dump],
          {
            env,
            stdio: 'pipe',
          },
        );
        const b = PostgresStateStore.open(restored);
        expect(b.schemaVersion).toBe(SCHEMA_VERSION);
        expect(b.listTargets()).toEqual([target('n1')]);
        expect(b.getOrder('o-1')).toEqual(order('o-1'));
        expect(b.getPlacement('i-1')).toEqual(placement('i-1'));
        expect(b.getMeta('state_seq')).toBe('7');
        b.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });

  describe('serializable transactions', () => {
    it('runs a transaction again when a concurrent writer made it lose a serialization conflict', async () => {
      const url = await server().createDatabase(`conflict_${n++}`);
      const a = PostgresStateStore.open(url);
      const b = PostgresStateStore.open(url);
      a.putPlacement(placement('i-1', { updated_at_ms: 1 }));
      let runs = 0;
      const out = a.transaction(() => {
        runs++;
        const p = a.getPlacement('i-1');
        // On the first run only, another controller changes the row after we read it.
        if (runs === 1) b.putPlacement(placement('i-1', { updated_at_ms: 50 }));
        a.putPlacement(placement('i-1', { updated_at_ms: (p?.updated_at_ms ?? 0) + 1 }));
        return p?.updated_at_ms;
      });
      expect(runs).toBe(2);
      // The second run read the other writer's value: no lost update.
      expect(out).toBe(50);
      expect(a.getPlacement('i-1')?.updated_at_ms).toBe(51);
      a.close();
      b.close();
    });

    it('gives up with store_conflict after maxRetries, leaving nothing of the transaction', async () => {
      const url = await server().createDatabase(`conflict_${n++}`);
      const a = PostgresStateStore.open(url, { maxRetries: 2 });
      const b = PostgresStateStore.open(url);
      a.putOrder(order('o-1'));
      let runs = 0;
      const e = stateError(() =>
        a.transaction(() => {
          runs++;
          a.getOrder('o-1');
          b.putOrder(order('o-1', { created_at_ms: runs }));
          a.putTarget(target(`n${runs}`));
          a.putOrder(order('o-1', { created_at_ms: 1000 + runs }));
        }),
      );
      expect(e.code).toBe('store_conflict');
      expect(runs).toBe(3);
      expect(a.listTargets()).toEqual([]);
      expect(a.getOrder('o-1')?.created_at_ms).toBe(3);
      a.close();
      b.close();
    });
  });

  describe('an unavailable server', () => {
    it('refuses calls with store_unavailable while the server is down, and reconnects once it is back', async () => {
      const url = await server().createDatabase(`down_${n++}`);
      const s = PostgresStateStore.open(url, { callTimeoutMs: 5000 });
      s.putTarget(target('n1'));
      const backend = Number(s.query('SELECT pg_backend_pid() AS pid').rows[0]?.pid);
      await server().kill();
      // The fault has landed once our connection's backend has gone too (it notices the postmaster's death).
      await gone(backend);
      const down = stateError(() => s.listTargets());
      expect(down.code).toBe('store_unavailable');
      expect(stateError(() => s.putTarget(target('n2'))).code).toBe('store_unavailable');
      await server().restart();
      expect(s.listTargets().map((t) => t.node_id)).toEqual(['n1']);
      s.close();
    }, 60_000);

    it('a transaction whose connection is cut (its backend terminated) leaves nothing; the next one succeeds', async () => {
      const url = await server().createDatabase(`down_${n++}`);
      const s = PostgresStateStore.open(url);
      const backend = Number(s.query('SELECT pg_backend_pid() AS pid').rows[0]?.pid);
      let cut = false;
      const e = stateError(() =>
        s.transaction(() => {
          s.putTarget(target('n1'));
          if (!cut) {
            cut = true;
            // The fault lands between two writes of the transaction: the backend is gone before the second.
            process.kill(backend, 'SIGTERM');
            const until = Date.now() + 10_000;
            for (;;) {
              try {
                process.kill(backend, 0);
              } catch {
                break;
              }
              if (Date.now() > until) throw new Error('backend did not exit');
            }
          }
          s.putTarget(target('n2'));
        }),
      );
      expect(e.code).toBe('store_unavailable');
      expect(cut).toBe(true);
      expect(s.listTargets()).toEqual([]);
      s.transaction(() => s.putTarget(target('n3')));
      expect(s.listTargets().map((t) => t.node_id)).toEqual(['n3']);
      s.close();
    }, 60_000);

    it('a call the server does not answer in time is store_unavailable after callTimeoutMs', async () => {
      const url = await server().createDatabase(`slow_${n++}`);
      // Migrated first under the default timeout: the short one is for the call under test only (the
      // migrations' statements may take longer than that on a loaded machine). 2 s, not less: opening
      // runs a few statements under it too, and CI (two test files at a time) once took 800 ms there.
      PostgresStateStore.open(url).close();
      const s = PostgresStateStore.open(url, { callTimeoutMs: 2_000 });
      const backend = Number(s.query('SELECT pg_backend_pid() AS pid').rows[0]?.pid);
      process.kill(backend, 'SIGSTOP');
      const t0 = Date.now();
      try {
        const e = stateError(() => s.listTargets());
        expect(e.code).toBe('store_unavailable');
        expect(e.message).toMatch(/within 2000 ms/);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(1_950);
      } finally {
        process.kill(backend, 'SIGCONT');
      }
      // For failFastMs (default: the call timeout) calls fail at once, without waiting on the server
      // again: a controller cut off from its database is not kept waiting call after call.
      const t1 = Date.now();
      const fast = stateError(() => s.listTargets());
      expect(fast.code).toBe('store_unavailable');
      expect(fast.message).toMatch(/a moment ago/);
      expect(Date.now() - t1).toBeLessThan(400);
      await new Promise((r) => setTimeout(r, Math.max(0, t1 + 2_100 - Date.now())));
      // Then a new connection serves the next call.
      expect(s.listTargets()).toEqual([]);
      s.close();
    }, 60_000);

    it('refuses to open on a port nothing listens on (store_unavailable) and with a wrong password (io)', async () => {
      const url = new URL(server().url);
      url.port = '1';
      expect(stateError(() => PostgresStateStore.open(url.toString(), { connectTimeoutMs: 2000 })).code).toBe(
        'store_unavailable',
      );
      const wrong = new URL(server().url);
      wrong.password = 'wrong';
      const e = stateError(() => PostgresStateStore.open(wrong.toString()));
      expect(e.code).toBe('io');
      expect(e.message).toMatch(/password authentication failed/);
      expect(e).toBeInstanceOf(StateError);
    });
  });
});
