import { StateError } from './errors.js';
import { MIGRATIONS } from './migrations.js';
import type { SyncPg } from './pg-sync.js';

// The state schema on PostgreSQL: the same tables, columns and logical version numbers as the
// SQLite schema (migrations.ts), in PostgreSQL's types: BIGINT for integers, BOOLEAN for booleans,
// TEXT for strings and JSON (JSON is kept as text, byte for byte what SQLite keeps, so that a signed
// document reads back exactly as written). Key columns use the "C" collation so that lists come
// back in the same (byte) order as from SQLite whatever the database's locale.

/** One step of the PostgreSQL schema (its `version` matches the SQLite migration of that number). */
export interface PgMigration {
  readonly version: number;
  readonly description: string;
  /** The statements of the step, run in one transaction. */
  readonly statements: readonly string[];
}

const KEY = 'TEXT COLLATE "C" PRIMARY KEY';

/** Every PostgreSQL migration, in order. Append only: a released step is never edited. */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE meta (key ${KEY}, value TEXT NOT NULL)`,
      `CREATE TABLE targets (
  node_id ${KEY}, url TEXT NOT NULL, public_key TEXT NOT NULL, key_source TEXT NOT NULL, tier TEXT,
  assigned_tier TEXT NOT NULL, pending_key TEXT, routes TEXT NOT NULL, facts TEXT,
  learned_at_ms BIGINT NOT NULL, last_seen_ms BIGINT, unreachable_since_ms BIGINT, last_error TEXT)`,
      `CREATE TABLE orders (
  order_id ${KEY}, workload TEXT NOT NULL, version TEXT NOT NULL, manifest_hash TEXT NOT NULL,
  package_id TEXT NOT NULL, mode TEXT NOT NULL, "values" TEXT NOT NULL, start BOOLEAN NOT NULL,
  node TEXT, prefer TEXT NOT NULL, avoid TEXT NOT NULL, allow_emulated BOOLEAN NOT NULL,
  created_at_ms BIGINT NOT NULL)`,
      `CREATE TABLE placements (
  instance_id ${KEY}, node_id TEXT COLLATE "C" NOT NULL, order_id TEXT NOT NULL, decision_id TEXT NOT NULL,
  workload TEXT NOT NULL, version TEXT NOT NULL, variant TEXT NOT NULL, runtime TEXT NOT NULL,
  manifest_hash TEXT NOT NULL, package_id TEXT NOT NULL, signer_keys TEXT NOT NULL,
  artifact_hashes TEXT NOT NULL, state TEXT NOT NULL, desired_running BOOLEAN NOT NULL,
  placed_at_ms BIGINT NOT NULL, updated_at_ms BIGINT NOT NULL)`,
      'CREATE INDEX placements_by_time ON placements (placed_at_ms, instance_id)',
      'CREATE INDEX placements_by_node ON placements (node_id, placed_at_ms, instance_id)',
      `CREATE TABLE unsettled (
  decision_id ${KEY}, order_id TEXT NOT NULL, node_id TEXT NOT NULL, expected_instance_id TEXT,
  variant TEXT NOT NULL, since_ms BIGINT NOT NULL, attempts BIGINT NOT NULL, last_error TEXT NOT NULL)`,
    ],
  },
  {
    version: 2,
    statements: ['ALTER TABLE targets ADD COLUMN seed TEXT', 'ALTER TABLE orders ADD COLUMN store_pin TEXT'],
  },
  {
    version: 3,
    statements: [
      'ALTER TABLE placements ADD COLUMN replaces TEXT',
      'ALTER TABLE placements ADD COLUMN reschedules BIGINT NOT NULL DEFAULT 0',
      'ALTER TABLE orders ADD COLUMN migratable BOOLEAN NOT NULL DEFAULT TRUE',
      `CREATE TABLE reschedules (
  instance_id ${KEY}, order_id TEXT NOT NULL, node_id TEXT NOT NULL, avoid TEXT NOT NULL,
  reschedules BIGINT NOT NULL, attempts BIGINT NOT NULL, next_at_ms BIGINT NOT NULL,
  since_ms BIGINT NOT NULL, decision_id TEXT, last_error TEXT)`,
      `CREATE TABLE alerts (
  alert_id ${KEY}, instance_id TEXT NOT NULL, node_id TEXT NOT NULL, order_id TEXT NOT NULL,
  reason TEXT NOT NULL, detail TEXT NOT NULL, raised_at_ms BIGINT NOT NULL, acked_at_ms BIGINT)`,
      `CREATE TABLE revocation_acks (
  node_id ${KEY}, generation BIGINT NOT NULL, acked_at_ms BIGINT, last_error TEXT)`,
      `CREATE TABLE revocation_list (
  name ${KEY}, generation BIGINT NOT NULL, list TEXT NOT NULL, stored_at_ms BIGINT NOT NULL)`,
    ],
  },
  { version: 4, statements: ['ALTER TABLE targets ADD COLUMN software TEXT'] },
  {
    version: 5,
    statements: [
      `CREATE TABLE idempotency_keys (
  key ${KEY}, fingerprint TEXT NOT NULL, order_id TEXT NOT NULL, result TEXT, created_at_ms BIGINT NOT NULL)`,
      'CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at_ms, key)',
      'ALTER TABLE targets ADD COLUMN lease_ms BIGINT',
    ],
  },
  {
    version: 6,
    statements: [
      'ALTER TABLE targets ADD COLUMN kind TEXT',
      "UPDATE targets SET kind = 'seed' WHERE seed IS NOT NULL",
    ],
  },
  {
    version: 7,
    statements: [
      `CREATE TABLE node_meta (
  node_id ${KEY}, cordoned BOOLEAN NOT NULL, labels TEXT NOT NULL, updated_at_ms BIGINT NOT NULL)`,
      'ALTER TABLE orders ADD COLUMN constraints TEXT',
      'ALTER TABLE orders ADD COLUMN spread TEXT',
    ],
  },
  {
    version: 8,
    statements: [
      `CREATE TABLE jobs (
  name ${KEY}, version BIGINT NOT NULL, status TEXT NOT NULL, rollout TEXT NOT NULL,
  stable_version BIGINT, blocked TEXT, detail TEXT, created_at_ms BIGINT NOT NULL, updated_at_ms BIGINT NOT NULL)`,
      `CREATE TABLE job_versions (
  job TEXT COLLATE "C" NOT NULL, version BIGINT NOT NULL, spec TEXT NOT NULL, spec_hash TEXT NOT NULL,
  manifest_hash TEXT NOT NULL, workload TEXT NOT NULL, workload_version TEXT NOT NULL, cause TEXT NOT NULL,
  reverted_from BIGINT, actor TEXT, created_at_ms BIGINT NOT NULL, PRIMARY KEY (job, version))`,
      `CREATE TABLE job_instances (
  instance_id ${KEY}, job TEXT COLLATE "C" NOT NULL, version BIGINT NOT NULL, node_id TEXT NOT NULL,
  order_id TEXT NOT NULL, placed_at_ms BIGINT NOT NULL, healthy_at_ms BIGINT)`,
      'CREATE INDEX job_instances_by_job ON job_instances (job, placed_at_ms, instance_id)',
    ],
  },
  {
    version: 9,
    statements: [
      'ALTER TABLE idempotency_keys ADD COLUMN claimed_by TEXT',
      'ALTER TABLE idempotency_keys ADD COLUMN claimed_at_ms BIGINT',
      'ALTER TABLE orders ADD COLUMN package_facts TEXT',
    ],
  },
  {
    version: 10,
    statements: [
      'ALTER TABLE placements ADD COLUMN ram_mb BIGINT',
      'ALTER TABLE placements ADD COLUMN cpu_pct BIGINT',
      'ALTER TABLE unsettled ADD COLUMN ram_mb BIGINT',
      'ALTER TABLE unsettled ADD COLUMN cpu_pct BIGINT',
      'CREATE INDEX unsettled_by_node ON unsettled (node_id)',
      `CREATE TABLE place_claims (
  claim_id ${KEY}, node_id TEXT COLLATE "C" NOT NULL, order_id TEXT NOT NULL, instance_id TEXT NOT NULL,
  ram_mb BIGINT NOT NULL, cpu_pct BIGINT NOT NULL, claimed_by TEXT NOT NULL, claimed_at_ms BIGINT NOT NULL)`,
      'CREATE INDEX place_claims_by_node ON place_claims (node_id, claimed_at_ms)',
      'CREATE INDEX place_claims_by_time ON place_claims (claimed_at_ms, claim_id)',
      `UPDATE placements p SET ram_mb = (o.package_facts::json->>'ram_mb')::bigint,
  cpu_pct = (o.package_facts::json->>'cpu_pct')::bigint
FROM orders o WHERE o.order_id = p.order_id COLLATE "C" AND o.package_facts IS NOT NULL`,
      `UPDATE unsettled u SET ram_mb = (o.package_facts::json->>'ram_mb')::bigint,
  cpu_pct = (o.package_facts::json->>'cpu_pct')::bigint
FROM orders o WHERE o.order_id = u.order_id COLLATE "C" AND o.package_facts IS NOT NULL`,
    ],
  },
].map((m) => ({ ...m, description: MIGRATIONS[m.version - 1]?.description ?? '' }));

/** The key of the advisory lock every migration (and the version check) holds. */
const MIGRATE_LOCK = 0x6865_6464; // "hedd"

/** The `meta` key holding the schema version. */
const VERSION_KEY = 'schema_version';

/**
 * Reads the schema version of the database `db` is connected to (its current schema): 0 when it
 * is empty (`inTransaction`: on the connection of the open transaction only). Throws `StateError` `schema` when it has tables but no `meta` table (not a Heddle
 * state database), `corrupt` when the version is unreadable.
 */
export function readPgSchemaVersion(db: SyncPg, inTransaction = false): number {
  const meta = db.query("SELECT to_regclass('meta') IS NOT NULL AS present", [], inTransaction).rows[0];
  if (meta?.present !== true) {
    const any = db.query(
      'SELECT tablename FROM pg_tables WHERE schemaname = current_schema() LIMIT 1',
      [],
      inTransaction,
    ).rows;
    if (any.length > 0) {
      throw new StateError('schema', 'not a Heddle state database: it has tables but no meta table', {
        field: 'meta',
      });
    }
    return 0;
  }
  const value = db.query('SELECT value FROM meta WHERE key = $1', [VERSION_KEY], inTransaction).rows[0]
    ?.value;
  const version = typeof value === 'string' && /^[1-9][0-9]{0,8}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(version)) {
    throw new StateError('corrupt', `corrupt row in meta (key ${VERSION_KEY}): not a schema version`, {
      field: `meta.${VERSION_KEY}`,
    });
  }
  return version;
}

/**
 * Brings the database up to the last of `migrations`. Each pending step runs in its own
 * transaction holding an advisory lock (so controllers starting together migrate once: the others
 * wait, then find the work done), and records the new version in `meta`. A database at a newer
 * version than `migrations` know is refused with `StateError` `schema` before anything is written.
 * Returns the version the database is at.
 */
export function migratePg(db: SyncPg, migrations: readonly PgMigration[] = PG_MIGRATIONS): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new StateError('schema', `migration ${i} has version ${m.version}, expected ${i + 1}`);
  });
  const check = (current: number): void => {
    if (current > migrations.length) {
      throw new StateError(
        'schema',
        `state database is at schema version ${current}, newer than this code knows (${migrations.length}); refusing to open it`,
        { field: `meta.${VERSION_KEY}` },
      );
    }
  };
  check(readPgSchemaVersion(db));
  for (;;) {
    db.query('BEGIN');
    try {
      // Every statement after BEGIN runs on its connection, or fails (never on a new one).
      db.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK], true);
      const current = readPgSchemaVersion(db, true);
      check(current);
      const next = migrations[current];
      if (next === undefined) {
        db.query('COMMIT', [], true);
        return migrations.length;
      }
      for (const sql of next.statements) db.query(sql, [], true);
      db.query(
        'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        [VERSION_KEY, String(next.version)],
        true,
      );
      db.query('COMMIT', [], true);
    } catch (error) {
      try {
        db.query('ROLLBACK', [], true);
      } catch {
        // the connection is gone: the server rolled back
      }
      throw error;
    }
  }
}
