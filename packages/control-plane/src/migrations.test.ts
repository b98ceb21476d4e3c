import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StateError } from './errors.js';
import { MIGRATIONS, type Migration, migrate, readSchemaVersion, SCHEMA_VERSION } from './migrations.js';
import { nodeLoadSql } from './node-load.js';
import { orderRecord } from './order.js';
import { SqliteStateStore } from './sqlite-store.js';
import { STATE_TABLES } from './state-store-contract.test-util.js';

const root = mkdtempSync(join(tmpdir(), 'heddle-migrations-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dbPath = (): string => {
  const dir = join(root, `m${n++}`);
  mkdirSync(dir);
  return join(dir, 'state.db');
};

const tables = (db: Database.Database): string[] =>
  (
    db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((r) => r.name);

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

function stateError(fn: () => unknown): StateError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StateError);
    return error as StateError;
  }
  throw new Error('expected a StateError');
}

describe('migrations', () => {
  it('numbers SCHEMA_VERSION after the last migration', () => {
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('creates the schema on a fresh file and records the version', () => {
    const path = dbPath();
    SqliteStateStore.open(path).close();
    const db = new Database(path);
    expect(tables(db)).toEqual(STATE_TABLES);
    expect(db.prepare('SELECT key, value FROM meta').all()).toEqual([
      { key: 'schema_version', value: String(SCHEMA_VERSION) },
    ]);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(readSchemaVersion(db)).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('is idempotent on reopen: the data stays, nothing runs twice', () => {
    const path = dbPath();
    const a = SqliteStateStore.open(path);
    a.putUnsettled({
      decision_id: 'd-1',
      order_id: 'o-1',
      node_id: 'n1',
      expected_instance_id: null,
      variant: 'v',
      since_ms: 1,
      attempts: 0,
      last_error: 'x',
    });
    a.close();
    for (let i = 0; i < 3; i++) {
      const s = SqliteStateStore.open(path);
      expect(s.schemaVersion).toBe(SCHEMA_VERSION);
      expect(s.listUnsettled()).toHaveLength(1);
      s.close();
    }
    const db = new Database(path);
    expect(migrate(db)).toBe(SCHEMA_VERSION);
    expect(migrate(db)).toBe(SCHEMA_VERSION);
    expect(db.prepare('SELECT count(*) AS c FROM meta').get()).toEqual({ c: 1 });
    db.close();
  });

  it('runs each pending step once, in its own transaction; a failing step leaves the previous version', () => {
    const db = new Database(dbPath());
    let ran = 0;
    const failing: Migration = {
      version: SCHEMA_VERSION + 1,
      description: 'fails halfway',
      up: (d) => {
        d.exec('CREATE TABLE extra (a TEXT) STRICT');
        d.exec("INSERT INTO targets (node_id) VALUES ('x')"); // NOT NULL columns: throws
      },
    };
    expect(() => migrate(db, [...MIGRATIONS, failing])).toThrow(/NOT NULL/);
    expect(readSchemaVersion(db)).toBe(SCHEMA_VERSION); // the known steps committed on their own
    expect(tables(db)).not.toContain('extra');

    const good: Migration = {
      version: SCHEMA_VERSION + 1,
      description: 'adds a column',
      up: (d) => {
        ran++;
        d.exec('ALTER TABLE targets ADD COLUMN note TEXT');
      },
    };
    expect(migrate(db, [...MIGRATIONS, good])).toBe(SCHEMA_VERSION + 1);
    expect(migrate(db, [...MIGRATIONS, good])).toBe(SCHEMA_VERSION + 1);
    expect(ran).toBe(1);
    expect(readSchemaVersion(db)).toBe(SCHEMA_VERSION + 1);
    // This code knows only SCHEMA_VERSION: the database is now from the future.
    expect(stateError(() => migrate(db)).code).toBe('schema');
    db.close();
  });

  it('refuses a database at a newer schema version and never touches it', () => {
    const path = dbPath();
    const raw = new Database(path);
    raw.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT; CREATE TABLE future (x)');
    raw.prepare("INSERT INTO meta VALUES ('schema_version', ?)").run(String(SCHEMA_VERSION + 1));
    raw.close();
    const before = sha(path);

    const e = stateError(() => SqliteStateStore.open(path));
    expect(e.code).toBe('schema');
    expect(e.message).toMatch(new RegExp(`version ${SCHEMA_VERSION + 1}`));
    expect(sha(path)).toBe(before);

    const db = new Database(path, { readonly: true });
    expect(tables(db)).toEqual(['future', 'meta']);
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    db.close();
  });

  it('refuses a database that is not a Heddle state store, and a broken version', () => {
    const foreign = dbPath();
    const raw = new Database(foreign);
    raw.exec('CREATE TABLE users (id INTEGER)');
    raw.close();
    expect(stateError(() => SqliteStateStore.open(foreign)).code).toBe('schema');

    const broken = dbPath();
    const b = new Database(broken);
    b.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    b.prepare("INSERT INTO meta VALUES ('schema_version', 'one')").run();
    b.close();
    const e = stateError(() => SqliteStateStore.open(broken));
    expect(e.code).toBe('corrupt');
    expect(e.message).toMatch(/meta/);
  });

  it('refuses a file that is not a database as corrupt', () => {
    const path = dbPath();
    writeFileSync(
      path,
      'this is not a database, not at all, it is just text that is long enough\n'.repeat(20),
    );
    expect(stateError(() => SqliteStateStore.open(path)).code).toBe('corrupt');
  });

  it('refuses misnumbered migrations', () => {
    const db = new Database(':memory:');
    const skip: Migration = { version: SCHEMA_VERSION + 2, description: 'gap', up: () => {} };
    expect(stateError(() => migrate(db, [...MIGRATIONS, skip])).code).toBe('schema');
    expect(tables(db)).toEqual([]);
    db.close();
  });
});

describe('version 2', () => {
  it('upgrades a version 1 database in place, keeping its rows, and the new fields round-trip', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 1));
    db.prepare(
      "INSERT INTO targets (node_id, url, public_key, key_source, tier, assigned_tier, pending_key, routes, facts, learned_at_ms, last_seen_ms, unreachable_since_ms, last_error) VALUES ('n1', 'ws://x', 'k', 'tofu', 'paired', 'paired', NULL, '[]', NULL, 1, NULL, NULL, NULL)",
    ).run();
    db.close();
    const store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      const t = store.getTarget('n1');
      expect(t?.url).toBe('ws://x');
      expect(t?.seed).toBeUndefined();
      store.putTarget({
        ...(t as NonNullable<typeof t>),
        seed: { spki: 'ab'.repeat(32), token_file: '/t', allow_plain_http: false },
      });
      expect(store.getTarget('n1')?.seed).toEqual({
        spki: 'ab'.repeat(32),
        token_file: '/t',
        allow_plain_http: false,
      });
    } finally {
      store.close();
    }
  });
});

describe('version 3', () => {
  const insertPlacement = (db: Database.Database, id: string, state: string): void => {
    db.prepare(
      `INSERT INTO placements (instance_id, node_id, order_id, decision_id, workload, version, variant, runtime, manifest_hash, package_id, signer_keys, artifact_hashes, state, desired_running, placed_at_ms, updated_at_ms) VALUES (?, 'n1', 'o-1', 'd', 'w', '1.0.0', 'v', 'native', 'm', 'p', '[]', '[]', ?, 1, 1, 1)`,
    ).run(id, state);
  };

  for (const from of [1, 2]) {
    it(`upgrades a version ${from} database in place: placements keep their state and gain an empty lineage; the new tables work`, () => {
      const path = dbPath();
      const db = new Database(path);
      migrate(db, MIGRATIONS.slice(0, from));
      insertPlacement(db, 'i-1', 'running');
      insertPlacement(db, 'i-2', 'lost');
      db.close();
      const store = SqliteStateStore.open(path);
      try {
        expect(store.schemaVersion).toBe(SCHEMA_VERSION);
        expect(store.getPlacement('i-1')).toMatchObject({ state: 'running', replaces: null, reschedules: 0 });
        expect(store.getPlacement('i-2')?.state).toBe('lost');
        const p = store.getPlacement('i-1') as NonNullable<ReturnType<typeof store.getPlacement>>;
        store.putPlacement({ ...p, state: 'rescheduled', replaces: null, reschedules: 2 });
        store.putPlacement({ ...p, instance_id: 'i-3', state: 'unhealthy', replaces: 'i-1', reschedules: 3 });
        expect(store.getPlacement('i-3')).toMatchObject({
          state: 'unhealthy',
          replaces: 'i-1',
          reschedules: 3,
        });
        const row = {
          instance_id: 'i-2',
          order_id: 'o-1',
          node_id: 'n1',
          avoid: ['n1'],
          reschedules: 1,
          attempts: 0,
          next_at_ms: 5,
          since_ms: 5,
          decision_id: null,
          last_error: null,
        };
        store.putReschedule(row);
        expect(store.listReschedules()).toEqual([row]);
        const alert = {
          alert_id: 'al-1',
          instance_id: 'i-2',
          node_id: 'n1',
          order_id: 'o-1',
          reason: 'pinned' as const,
          detail: 'x',
          raised_at_ms: 1,
          acked_at_ms: null,
        };
        store.putAlert(alert);
        expect(store.getAlert('al-1')).toEqual(alert);
        store.putRevocationAck({ node_id: 'n1', generation: 2, acked_at_ms: 3, last_error: null });
        expect(store.listRevocationAcks()).toEqual([
          { node_id: 'n1', generation: 2, acked_at_ms: 3, last_error: null },
        ]);
        store.putRevocationList({
          name: 'current',
          generation: 0,
          list: { schema: 'heddle.revocation-list.v1', generation: 0, entries: [] },
          stored_at_ms: 1,
        });
        expect(store.getRevocationList()?.list.schema).toBe('heddle.revocation-list.v1');
      } finally {
        store.close();
      }
    });
  }

  it('refuses to write or read a placement state the lifecycle does not know', () => {
    const path = dbPath();
    const store = SqliteStateStore.open(path);
    store.close();
    const db = new Database(path);
    insertPlacement(db, 'i-9', 'exploded');
    db.close();
    const s = SqliteStateStore.open(path);
    try {
      const e = stateError(() => s.getPlacement('i-9'));
      expect(e.code).toBe('corrupt');
      expect(e.field).toBe('placements.state');
    } finally {
      s.close();
    }
  });
});

describe('version 4', () => {
  it('upgrades a version 3 database in place: targets keep every field and report no software until described', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 3));
    expect(readSchemaVersion(db)).toBe(3);
    db.prepare(
      "INSERT INTO targets (node_id, url, public_key, key_source, tier, assigned_tier, pending_key, routes, facts, learned_at_ms, last_seen_ms, unreachable_since_ms, last_error, seed) VALUES ('n1', 'ws://x', 'k', 'pinned', 'paired', 'pinned', NULL, '[\"wasi\"]', NULL, 1, 2, NULL, 'e', NULL)",
    ).run();
    db.close();
    let store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      const t = store.getTarget('n1') as NonNullable<ReturnType<typeof store.getTarget>>;
      expect(t).toMatchObject({
        url: 'ws://x',
        public_key: 'k',
        key_source: 'pinned',
        tier: 'paired',
        assigned_tier: 'pinned',
        routes: ['wasi'],
        learned_at_ms: 1,
        last_seen_ms: 2,
        last_error: 'e',
      });
      expect(t.software ?? null).toBeNull();
      store.putTarget({ ...t, software: { name: 'heddle-host', version: '1.2.3' } });
    } finally {
      store.close();
    }
    store = SqliteStateStore.open(path);
    try {
      expect(store.getTarget('n1')?.software).toEqual({ name: 'heddle-host', version: '1.2.3' });
      expect(store.getTarget('n1')?.routes).toEqual(['wasi']);
    } finally {
      store.close();
    }
  });
});

describe('version 5', () => {
  it('upgrades a version 3 database in place: targets gain no lease, idempotency keys are kept', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 3));
    db.prepare(
      `INSERT INTO targets (node_id, url, public_key, key_source, tier, assigned_tier, pending_key, routes, facts, learned_at_ms, last_seen_ms, unreachable_since_ms, last_error) VALUES ('n1', 'ws://h:1', 'k', 'tofu', 'paired', 'paired', NULL, '[]', NULL, 1, 1, NULL, NULL)`,
    ).run();
    db.close();
    const store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      const t = store.getTarget('n1') as NonNullable<ReturnType<typeof store.getTarget>>;
      expect(t.lease_ms).toBeUndefined();
      store.putTarget({ ...t, lease_ms: 5_000 });
      expect(store.getTarget('n1')?.lease_ms).toBe(5_000);
      const key = {
        key: 'k-1',
        fingerprint: 'f',
        order_id: 'o-1',
        result: null,
        created_at_ms: 10,
        claimed_by: null,
        claimed_at_ms: null,
      };
      store.putIdempotencyKey(key);
      store.putIdempotencyKey({ ...key, key: 'k-2', created_at_ms: 20 });
      expect(store.getIdempotencyKey('k-1')).toEqual(key);
      expect(store.pruneIdempotencyKeys(15)).toBe(1);
      expect(store.getIdempotencyKey('k-1')).toBeUndefined();
      expect(store.removeIdempotencyKey('k-2')).toBe(true);
    } finally {
      store.close();
    }
  });
});

describe('version 6', () => {
  it('upgrades a version 5 database in place: a Seed recorded before is kind seed, a host has no kind', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 5));
    const insert = db.prepare(
      'INSERT INTO targets (node_id, url, public_key, key_source, tier, assigned_tier, pending_key, routes, facts, learned_at_ms, last_seen_ms, unreachable_since_ms, last_error, seed) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, NULL, 1, 1, NULL, NULL, ?)',
    );
    insert.run('h1', 'ws://h:1', 'k', 'tofu', 'paired', 'paired', '[]', null);
    insert.run(
      's1',
      'https://seed:8443',
      'ab'.repeat(32),
      'pinned',
      'paired',
      'paired',
      '["remote.api"]',
      JSON.stringify({ spki: 'ab'.repeat(32), token_file: '/t', allow_plain_http: false }),
    );
    db.close();
    const store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      expect(store.getTarget('s1')?.kind).toBe('seed');
      expect(store.getTarget('h1')?.kind).toBeUndefined();
      const h1 = store.getTarget('h1');
      if (h1 === undefined) throw new Error('h1 is gone');
      store.putTarget({ ...h1, kind: 'fake' });
      expect(store.getTarget('h1')?.kind).toBe('fake');
    } finally {
      store.close();
    }
  });
});

describe('version 7', () => {
  it('upgrades a version 6 database in place: orders without constraints or spread, no node settings; both round-trip', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 6));
    db.prepare(
      `INSERT INTO orders (order_id, workload, version, manifest_hash, package_id, mode, "values", start, node, prefer, avoid, allow_emulated, migratable, created_at_ms) VALUES ('o-1', 'w', '1', 'h', 'p', '{"type":"once"}', '{}', 1, NULL, '[]', '[]', 0, 1, 5)`,
    ).run();
    db.close();
    const store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      const o = store.getOrder('o-1');
      expect(o?.constraints).toBeUndefined();
      expect(o?.spread).toBeUndefined();
      expect(store.listNodeMeta()).toEqual([]);
      if (o === undefined) throw new Error('o-1 is gone');
      store.putOrder({ ...o, constraints: [{ label: 'room', value: 'kitchen' }], spread: 'room' });
      expect(store.getOrder('o-1')).toMatchObject({
        constraints: [{ label: 'room', value: 'kitchen' }],
        spread: 'room',
      });
      const meta = { node_id: 'n1', cordoned: true, labels: { room: 'hall' }, updated_at_ms: 9 };
      store.putNodeMeta(meta);
      expect(store.getNodeMeta('n1')).toEqual(meta);
      expect(store.removeNodeMeta('n1')).toBe(true);
      expect(store.getNodeMeta('n1')).toBeUndefined();
    } finally {
      store.close();
    }
  });
});

describe('version 8', () => {
  it('upgrades a version 7 database in place: no jobs, and a job, its version and instance round-trip', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 7));
    db.close();
    const store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      expect(store.listJobs()).toEqual([]);
      expect(store.listJobInstances()).toEqual([]);
      const job = {
        name: 'web',
        version: 1,
        status: 'running' as const,
        rollout: 'complete' as const,
        stable_version: 1,
        blocked: null,
        detail: null,
        created_at_ms: 1,
        updated_at_ms: 1,
      };
      store.putJob(job);
      expect(store.getJob('web')).toEqual(job);
      expect(store.listJobVersions('web')).toEqual([]);
    } finally {
      store.close();
    }
  });
});

describe('version 9', () => {
  it("upgrades a version 8 database in place: a key written before reads unclaimed, a claim and an order's package facts round-trip", () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 8));
    db.prepare(
      "INSERT INTO idempotency_keys (key, fingerprint, order_id, result, created_at_ms) VALUES ('k-old', 'f', 'o-1', NULL, 5)",
    ).run();
    db.close();
    const store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      expect(store.getIdempotencyKey('k-old')).toEqual({
        key: 'k-old',
        fingerprint: 'f',
        order_id: 'o-1',
        result: null,
        created_at_ms: 5,
        claimed_by: null,
        claimed_at_ms: null,
      });
      const claimed = {
        key: 'k-new',
        fingerprint: 'f',
        order_id: 'o-2',
        result: null,
        created_at_ms: 6,
        claimed_by: 'ctl/abc',
        claimed_at_ms: 6,
      };
      store.putIdempotencyKey(claimed);
      expect(store.getIdempotencyKey('k-new')).toEqual(claimed);
      const facts = { signer_keys: ['ab'], artifact_hashes: ['cd'], ram_mb: 64, cpu_pct: 10 };
      const pkg = { workload: 'w', version: '1.0.0', manifest_hash: 'm', package_id: 'p' };
      const bare = orderRecord({ package_dir: '/p' }, pkg, 7, 'o-bare');
      store.putOrder(bare);
      expect(store.getOrder('o-bare')?.package_facts).toBeUndefined();
      store.putOrder(orderRecord({ package_dir: '/p' }, pkg, 7, 'o-facts', facts));
      expect(store.getOrder('o-facts')?.package_facts).toEqual(facts);
    } finally {
      store.close();
    }
  });
});

describe('version 10', () => {
  it("upgrades a version 9 database in place: placements and unsettled decisions take their order's package resources, the node's load counts them", () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 9));
    const facts = { signer_keys: ['ab'], artifact_hashes: ['cd'], ram_mb: 64, cpu_pct: 10 };
    const pkg = { workload: 'w', version: '1.0.0', manifest_hash: 'm', package_id: 'p' };
    db.close();
    // Orders written at v9 (with and without facts), and a placement and an unsettled decision of each.
    const v9 = new Database(path);
    const insertOrder = (id: string, withFacts: boolean): void => {
      v9.prepare(
        `INSERT INTO orders (order_id, workload, version, manifest_hash, package_id, mode, "values", start, node, prefer, avoid, allow_emulated, created_at_ms, migratable, package_facts)
         VALUES (?, ?, ?, ?, ?, '{"type":"once"}', '{}', 1, NULL, '[]', '[]', 0, 7, 1, ?)`,
      ).run(
        id,
        pkg.workload,
        pkg.version,
        pkg.manifest_hash,
        pkg.package_id,
        withFacts ? JSON.stringify(facts) : null,
      );
    };
    const insertPlacement = (id: string, orderId: string): void => {
      v9.prepare(
        `INSERT INTO placements (instance_id, node_id, order_id, decision_id, workload, version, variant, runtime, manifest_hash, package_id, signer_keys, artifact_hashes, state, desired_running, placed_at_ms, updated_at_ms)
         VALUES (?, 'n1', ?, 'd', 'w', '1.0.0', 'v', 'wasi', 'm', 'p', '[]', '[]', 'running', 1, 8, 8)`,
      ).run(id, orderId);
    };
    const insertUnsettled = (id: string, orderId: string): void => {
      v9.prepare(
        `INSERT INTO unsettled (decision_id, order_id, node_id, expected_instance_id, variant, since_ms, attempts, last_error)
         VALUES (?, ?, 'n1', NULL, 'v', 9, 0, 'lost')`,
      ).run(id, orderId);
    };
    insertOrder('o-facts', true);
    insertOrder('o-bare', false);
    insertPlacement('i-facts', 'o-facts');
    insertPlacement('i-bare', 'o-bare');
    insertUnsettled('d-facts', 'o-facts');
    insertUnsettled('d-bare', 'o-bare');
    v9.close();
    const store = SqliteStateStore.open(path);
    try {
      expect(store.schemaVersion).toBe(10);
      expect(store.getPlacement('i-facts')).toMatchObject({ ram_mb: 64, cpu_pct: 10 });
      expect(store.getPlacement('i-bare')?.ram_mb).toBeUndefined();
      expect(store.getUnsettled('d-facts')).toMatchObject({ ram_mb: 64, cpu_pct: 10 });
      expect(store.getUnsettled('d-bare')?.cpu_pct).toBeUndefined();
      expect(store.nodeLoad('n1', 0)).toEqual({
        ram_mb: 128,
        cpu_pct: 20,
        placements: 2,
        unsettled: 2,
        claims: 0,
        stale_claims: 0,
      });
      expect(store.listPlaceClaims()).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('reads one node through indexes (the query plan), never a whole table', () => {
    const db = new Database(':memory:');
    migrate(db);
    // cast: EXPLAIN QUERY PLAN rows carry a `detail` text column
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${nodeLoadSql('@node', '@since')}`)
      .all({ node: 'n1', since: 0 }) as {
      detail: string;
    }[];
    const details = plan.map((r) => r.detail);
    expect(details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/SEARCH placements USING INDEX placements_by_node \(node_id=\?\)/),
        expect.stringMatching(/SEARCH unsettled USING INDEX unsettled_by_node \(node_id=\?\)/),
        expect.stringMatching(
          /SEARCH place_claims USING (COVERING )?INDEX place_claims_by_node \(node_id=\?\)/,
        ),
      ]),
    );
    expect(details.some((d) => /^SCAN (placements|unsettled|place_claims)/.test(d))).toBe(false);
    db.close();
  });
});
