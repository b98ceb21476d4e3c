// The `@heddle/control-plane/postgres` entry: the PostgreSQL `StateStore` (the `pg` client, an
// optional peer dependency: install it to use this entry; the main entry never loads it).

export { migratePg, PG_MIGRATIONS, type PgMigration, readPgSchemaVersion } from './pg-migrations.js';
export type { SharedWatchOptions, SharedWatchStatus } from './pg-shared-watch.js';
export {
  type PostgresConnection,
  PostgresStateStore,
  type PostgresStoreOptions,
} from './pg-store.js';
export {
  PgCallError,
  type PgConnectionConfig,
  SyncPg,
  type SyncPgOptions,
  type SyncPgResult,
} from './pg-sync.js';
