// The `@heddle/control-plane/sqlite` entry: the SQLite `StateStore` (better-sqlite3, an optional peer
// dependency: install it to use this entry; the main entry never loads it).

export {
  checkSchemaVersion,
  MIGRATIONS,
  type Migration,
  migrate,
  readSchemaVersion,
  SCHEMA_VERSION,
} from './migrations.js';
export { SqliteStateStore, type SqliteStoreOptions } from './sqlite-store.js';
