import type { Database } from 'better-sqlite3';
import { StateError } from './errors.js';

/** One step of the state schema: `up` runs inside a transaction, with the version recorded in it. */
export interface Migration {
  /** The version the schema is at after this step (1, 2, ... with no gaps). */
  readonly version: number;
  /** What the step does, for people. */
  readonly description: string;
  /** Applies the step to `db` (DDL and data changes; no transaction control of its own). */
  readonly up: (db: Database) => void;
}

/**
 * Version 1: the four record tables and `meta`. Scalar fields are typed columns (booleans 0/1);
 * list and object fields are JSON text columns. Tables are STRICT, so SQLite refuses a value of the
 * wrong storage type. No foreign keys between tables: which records may refer to which is the
 * controller's rule (an unsettled place names an order and node that may be gone), not the store's.
 */
const V1_SCHEMA = `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE targets (
  node_id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  public_key TEXT NOT NULL,
  key_source TEXT NOT NULL,
  tier TEXT,
  assigned_tier TEXT NOT NULL,
  pending_key TEXT,
  routes TEXT NOT NULL,
  facts TEXT,
  learned_at_ms INTEGER NOT NULL,
  last_seen_ms INTEGER,
  unreachable_since_ms INTEGER,
  last_error TEXT
) STRICT;

CREATE TABLE orders (
  order_id TEXT PRIMARY KEY,
  workload TEXT NOT NULL,
  version TEXT NOT NULL,
  manifest_hash TEXT NOT NULL,
  package_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  "values" TEXT NOT NULL,
  start INTEGER NOT NULL,
  node TEXT,
  prefer TEXT NOT NULL,
  avoid TEXT NOT NULL,
  allow_emulated INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE placements (
  instance_id TEXT PRIMARY KEY,
  node_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  decision_id TEXT NOT NULL,
  workload TEXT NOT NULL,
  version TEXT NOT NULL,
  variant TEXT NOT NULL,
  runtime TEXT NOT NULL,
  manifest_hash TEXT NOT NULL,
  package_id TEXT NOT NULL,
  signer_keys TEXT NOT NULL,
  artifact_hashes TEXT NOT NULL,
  state TEXT NOT NULL,
  desired_running INTEGER NOT NULL,
  placed_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX placements_by_time ON placements (placed_at_ms, instance_id);
CREATE INDEX placements_by_node ON placements (node_id, placed_at_ms, instance_id);

CREATE TABLE unsettled (
  decision_id TEXT PRIMARY KEY,
  order_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  expected_instance_id TEXT,
  variant TEXT NOT NULL,
  since_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  last_error TEXT NOT NULL
) STRICT;
`;

/**
 * Version 3 (issue 8): placement states widen to the lifecycle states (a TEXT column: no DDL), each
 * placement records the instance it replaced and its reschedule count; reschedules waiting for a
 * node, alerts, and the revocation list distributed to hosts with each node's acknowledged generation
 * are kept so a controller restart continues them.
 */
const V3_SCHEMA = `
ALTER TABLE placements ADD COLUMN replaces TEXT;
ALTER TABLE placements ADD COLUMN reschedules INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN migratable INTEGER NOT NULL DEFAULT 1;

CREATE TABLE reschedules (
  instance_id TEXT PRIMARY KEY,
  order_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  avoid TEXT NOT NULL,
  reschedules INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  next_at_ms INTEGER NOT NULL,
  since_ms INTEGER NOT NULL,
  decision_id TEXT,
  last_error TEXT
) STRICT;

CREATE TABLE alerts (
  alert_id TEXT PRIMARY KEY,
  instance_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  detail TEXT NOT NULL,
  raised_at_ms INTEGER NOT NULL,
  acked_at_ms INTEGER
) STRICT;

CREATE TABLE revocation_acks (
  node_id TEXT PRIMARY KEY,
  generation INTEGER NOT NULL,
  acked_at_ms INTEGER,
  last_error TEXT
) STRICT;

CREATE TABLE revocation_list (
  name TEXT PRIMARY KEY,
  generation INTEGER NOT NULL,
  list TEXT NOT NULL,
  stored_at_ms INTEGER NOT NULL
) STRICT;
`;

/**
 * Version 5: idempotency keys of places (a retried place answers with the order it made,
 * never makes a second), and each host's controller lease as its describe advertises it (a replacement
 * is not started before the old host's lease has surely expired).
 */
const V5_SCHEMA = `
CREATE TABLE idempotency_keys (
  key TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  order_id TEXT NOT NULL,
  result TEXT,
  created_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at_ms, key);
ALTER TABLE targets ADD COLUMN lease_ms INTEGER;
`;

/**
 * Version 8 (issue 20): declarative jobs. A job's versions are keyed by (job, version) and never
 * updated (the store inserts them only); `job_instances` names the job version of each instance the
 * reconciler placed.
 */
const V8_SCHEMA = `
CREATE TABLE jobs (
  name TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  status TEXT NOT NULL,
  rollout TEXT NOT NULL,
  stable_version INTEGER,
  blocked TEXT,
  detail TEXT,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE job_versions (
  job TEXT NOT NULL,
  version INTEGER NOT NULL,
  spec TEXT NOT NULL,
  spec_hash TEXT NOT NULL,
  manifest_hash TEXT NOT NULL,
  workload TEXT NOT NULL,
  workload_version TEXT NOT NULL,
  cause TEXT NOT NULL,
  reverted_from INTEGER,
  actor TEXT,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (job, version)
) STRICT;

CREATE TABLE job_instances (
  instance_id TEXT PRIMARY KEY,
  job TEXT NOT NULL,
  version INTEGER NOT NULL,
  node_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  placed_at_ms INTEGER NOT NULL,
  healthy_at_ms INTEGER
) STRICT;
CREATE INDEX job_instances_by_job ON job_instances (job, placed_at_ms, instance_id);
`;

/**
 * Version 10 (issue 22): capacity shared by several controllers. Placements and unsettled decisions
 * carry the resources they hold on their node (filled from their order's package facts where it has
 * them); places claiming room before they are sent are `place_claims`; each of the three is read per
 * node through an index on node_id.
 */
const V10_SCHEMA = `
ALTER TABLE placements ADD COLUMN ram_mb INTEGER;
ALTER TABLE placements ADD COLUMN cpu_pct INTEGER;
ALTER TABLE unsettled ADD COLUMN ram_mb INTEGER;
ALTER TABLE unsettled ADD COLUMN cpu_pct INTEGER;
CREATE INDEX unsettled_by_node ON unsettled (node_id);
CREATE TABLE place_claims (
  claim_id TEXT PRIMARY KEY,
  node_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  instance_id TEXT NOT NULL,
  ram_mb INTEGER NOT NULL,
  cpu_pct INTEGER NOT NULL,
  claimed_by TEXT NOT NULL,
  claimed_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX place_claims_by_node ON place_claims (node_id, claimed_at_ms);
CREATE INDEX place_claims_by_time ON place_claims (claimed_at_ms, claim_id);
UPDATE placements SET
  ram_mb = (SELECT CAST(json_extract(o.package_facts, '$.ram_mb') AS INTEGER) FROM orders o WHERE o.order_id = placements.order_id),
  cpu_pct = (SELECT CAST(json_extract(o.package_facts, '$.cpu_pct') AS INTEGER) FROM orders o WHERE o.order_id = placements.order_id)
WHERE EXISTS (SELECT 1 FROM orders o WHERE o.order_id = placements.order_id AND o.package_facts IS NOT NULL);
UPDATE unsettled SET
  ram_mb = (SELECT CAST(json_extract(o.package_facts, '$.ram_mb') AS INTEGER) FROM orders o WHERE o.order_id = unsettled.order_id),
  cpu_pct = (SELECT CAST(json_extract(o.package_facts, '$.cpu_pct') AS INTEGER) FROM orders o WHERE o.order_id = unsettled.order_id)
WHERE EXISTS (SELECT 1 FROM orders o WHERE o.order_id = unsettled.order_id AND o.package_facts IS NOT NULL);
`;

/** Every migration, in order. Append only: a released step is never edited. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'targets, orders, placements, unsettled and meta tables',
    up: (db) => {
      db.exec(V1_SCHEMA);
    },
  },
  {
    version: 2,
    description: 'Cognitum Seeds as targets (targets.seed) and store-pinned orders (orders.store_pin)',
    up: (db) => {
      db.exec('ALTER TABLE targets ADD COLUMN seed TEXT');
      db.exec('ALTER TABLE orders ADD COLUMN store_pin TEXT');
    },
  },
  {
    version: 3,
    description:
      'instance lifecycle: placement lineage (replaces, reschedules), pending reschedules, alerts, the distributed revocation list and per-node acknowledged generations',
    up: (db) => {
      db.exec(V3_SCHEMA);
    },
  },
  {
    version: 4,
    description: 'the software a host reports in describe (targets.software)',
    up: (db) => {
      db.exec('ALTER TABLE targets ADD COLUMN software TEXT');
    },
  },
  {
    version: 5,
    description: 'idempotency keys of places, and each host’s advertised controller lease (targets.lease_ms)',
    up: (db) => {
      db.exec(V5_SCHEMA);
    },
  },
  {
    version: 6,
    description:
      'the kind of each node, naming its driver (targets.kind; Seeds recorded before are kind seed)',
    up: (db) => {
      db.exec('ALTER TABLE targets ADD COLUMN kind TEXT');
      db.exec("UPDATE targets SET kind = 'seed' WHERE seed IS NOT NULL");
    },
  },
  {
    version: 7,
    description:
      'node cordon and labels (node_meta), and the label constraints and spread of orders (orders.constraints, orders.spread)',
    up: (db) => {
      db.exec(`CREATE TABLE node_meta (
  node_id TEXT PRIMARY KEY,
  cordoned INTEGER NOT NULL,
  labels TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL
)`);
      db.exec('ALTER TABLE orders ADD COLUMN constraints TEXT');
      db.exec('ALTER TABLE orders ADD COLUMN spread TEXT');
    },
  },
  {
    version: 8,
    description:
      'declarative jobs: jobs (desired version, status, rollout), immutable job versions, and which instances belong to which job version',
    up: (db) => {
      db.exec(V8_SCHEMA);
    },
  },
  {
    version: 9,
    description:
      'idempotency keys claimed before their place is sent: the claiming controller and when (idempotency_keys.claimed_by, claimed_at_ms); the package facts of an order (orders.package_facts)',
    up: (db) => {
      db.exec('ALTER TABLE orders ADD COLUMN package_facts TEXT');
      db.exec('ALTER TABLE idempotency_keys ADD COLUMN claimed_by TEXT');
      db.exec('ALTER TABLE idempotency_keys ADD COLUMN claimed_at_ms INTEGER');
    },
  },
  {
    version: 10,
    description:
      'capacity shared by several controllers: the resources of placements and unsettled decisions (placements.ram_mb, cpu_pct; unsettled.ram_mb, cpu_pct, from their orders’ package facts), places claiming room before they are sent (place_claims), read per node through indexes',
    up: (db) => {
      db.exec(V10_SCHEMA);
    },
  },
];

/** The schema version this code writes and understands (the last of {@link MIGRATIONS}). */
export const SCHEMA_VERSION: number = MIGRATIONS.length;

/** The `meta` key holding the schema version. */
const VERSION_KEY = 'schema_version';

/**
 * Reads the schema version of `db` without writing: 0 for an empty database. Throws `StateError`
 * `schema` for a non-empty database that is not a Heddle state store (no `meta` table), `corrupt`
 * for an unreadable version.
 */
export function readSchemaVersion(db: Database): number {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get();
  if (hasMeta === undefined) {
    const anything = db
      .prepare("SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' LIMIT 1")
      .get();
    if (anything !== undefined) {
      throw new StateError('schema', 'not a Heddle state database: it has tables but no meta table', {
        field: 'meta',
      });
    }
    return 0;
  }
  // cast: better-sqlite3 types a row unknown; the meta table has one text column `value`, checked below
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(VERSION_KEY) as
    | { value: unknown }
    | undefined;
  const value = row?.value;
  const version = typeof value === 'string' && /^[1-9][0-9]{0,8}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(version)) {
    throw new StateError('corrupt', `corrupt row in meta (key ${VERSION_KEY}): not a schema version`, {
      field: `meta.${VERSION_KEY}`,
    });
  }
  return version;
}

/** Checks that `migrations` are numbered 1, 2, ... in order; throws `StateError` `schema` if not. */
function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new StateError('schema', `migration ${i} has version ${m.version}, expected ${i + 1}`);
    }
  });
}

/**
 * Reads the schema version of `db` (without writing) and refuses, with `StateError` `schema`, a
 * database at a newer version than `migrations` know. Returns the version it is at.
 */
export function checkSchemaVersion(db: Database, migrations: readonly Migration[] = MIGRATIONS): number {
  const current = readSchemaVersion(db);
  if (current > migrations.length) {
    throw new StateError(
      'schema',
      `state database is at schema version ${current}, newer than this code knows (${migrations.length}); refusing to open it`,
      { field: `meta.${VERSION_KEY}` },
    );
  }
  return current;
}

/**
 * Brings `db` up to the last of `migrations`: each pending step runs in its own transaction, which
 * also records the new version in `meta` (a step that throws leaves the database at the previous
 * version). A database at a newer version than `migrations` know is refused with `StateError`
 * `schema` before anything is written. Returns the version the database is at. Running it again is
 * a no-op.
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number {
  checkOrder(migrations);
  const current = checkSchemaVersion(db, migrations);
  for (const m of migrations.slice(current)) {
    db.transaction(() => {
      m.up(db);
      db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ).run(VERSION_KEY, String(m.version));
    }).immediate();
  }
  return migrations.length;
}
