import { closeSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { makeDirs } from '@heddle/envelope';
import Database from 'better-sqlite3';
import { StateError } from './errors.js';
import { GroupCommit } from './group-commit.js';
import { checkSchemaVersion, migrate } from './migrations.js';
import { nodeLoadOf, nodeLoadSql } from './node-load.js';
import { decodeRow, encodeRecord } from './record-codec.js';
import {
  ALERTS,
  IDEMPOTENCY_KEYS,
  JOB_INSTANCES,
  JOB_VERSIONS,
  JOBS,
  NODE_META,
  ORDERS,
  PLACE_CLAIMS,
  PLACEMENTS,
  RESCHEDULES,
  REVOCATION_ACKS,
  REVOCATION_LIST,
  TARGETS,
  type TableSpec,
  UNSETTLED,
} from './sqlite-tables.js';
import type {
  AlertRecord,
  HeldRevocationList,
  IdempotencyRecord,
  JobInstanceRecord,
  JobRecord,
  JobVersionRecord,
  NodeLoad,
  NodeMetaRecord,
  OrderRecord,
  PlaceClaimRecord,
  PlacementRecord,
  RescheduleRecord,
  RevocationAckRecord,
  StateStore,
  TargetRecord,
  UnsettledRecord,
} from './state-store.js';

/** Options of {@link SqliteStateStore.open}. */
export interface SqliteStoreOptions {
  /**
   * How long to wait for another connection's lock before refusing with `StateError` `io` (ms).
   * Default 2000.
   */
  readonly busyTimeoutMs?: number;
}

const q = (id: string): string => `"${id}"`;

/** The cached statements of one table (prepared at first use). */
class Table<R> {
  #get: Database.Statement | undefined;
  #list: Database.Statement | undefined;
  #put: Database.Statement | undefined;
  #remove: Database.Statement | undefined;

  constructor(
    private readonly db: Database.Database,
    readonly spec: TableSpec<R>,
  ) {}

  private get cols(): string {
    return this.spec.columns.map(q).join(', ');
  }
  private get getStmt(): Database.Statement {
    const { name, key } = this.spec;
    this.#get ??= this.db.prepare(`SELECT ${this.cols} FROM ${name} WHERE ${q(key)} = ?`);
    return this.#get;
  }
  private get listStmt(): Database.Statement {
    this.#list ??= this.db.prepare(
      `SELECT ${this.cols} FROM ${this.spec.name} ORDER BY ${this.spec.orderBy}`,
    );
    return this.#list;
  }
  private get putStmt(): Database.Statement {
    const { name, key, columns } = this.spec;
    const updates = columns
      .filter((c) => c !== key)
      .map((c) => `${q(c)} = excluded.${q(c)}`)
      .join(', ');
    this.#put ??= this.db.prepare(
      `INSERT INTO ${name} (${this.cols}) VALUES (${columns.map(() => '?').join(', ')}) ON CONFLICT (${q(key)}) DO UPDATE SET ${updates}`,
    );
    return this.#put;
  }
  private get removeStmt(): Database.Statement {
    this.#remove ??= this.db.prepare(`DELETE FROM ${this.spec.name} WHERE ${q(this.spec.key)} = ?`);
    return this.#remove;
  }

  get(key: string): R | undefined {
    const row = this.getStmt.get(key);
    return row === undefined ? undefined : this.decode(row);
  }

  list(): R[] {
    return this.listStmt.all().map((row) => this.decode(row));
  }

  put(record: R): void {
    this.putStmt.run(...this.encode(record));
  }

  remove(key: string): boolean {
    return this.removeStmt.run(key).changes > 0;
  }

  /** Validates `record` and turns it into column values, in column order (booleans 0/1). */
  encode(record: R): unknown[] {
    return encodeRecord(this.spec, record, (b) => (b ? 1 : 0));
  }

  /** Turns a row back into a record; a row that does not parse is `StateError` `corrupt`. */
  decode(row: unknown): R {
    return decodeRow(this.spec, row);
  }
}

/** Maps a SQLite failure to a `StateError` (`corrupt` for a damaged file, `io` otherwise). */
function toStateError(error: unknown, what: string): unknown {
  if (error instanceof StateError || !(error instanceof Database.SqliteError)) return error;
  const corrupt = error.code.startsWith('SQLITE_CORRUPT') || error.code === 'SQLITE_NOTADB';
  const busy = error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED');
  const message = busy
    ? `state database is locked by another connection (${what}): ${error.message}`
    : `state database ${what} failed (${error.code}): ${error.message}`;
  return new StateError(corrupt ? 'corrupt' : 'io', message, { cause: error });
}

/** Creates the parent directory (0700) and the file (0600) when they do not exist yet. */
function prepareFile(path: string): void {
  try {
    makeDirs(dirname(resolve(path)), 0o700);
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    // cast: fs errors carry an errno code
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw new StateError(
      'io',
      `cannot create state database ${path}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * The default {@link StateStore}: an embedded SQLite database (better-sqlite3, synchronous).
 *
 * - Durability: WAL journal with `synchronous = FULL`, so every committed write is fsynced before
 *   the call returns; a crash (even `kill -9`) loses at most the transaction in flight. Inside
 *   {@link SqliteStateStore.grouped} writes share one transaction with the other groups, committed
 *   (one fsync) once the event loop has run what is ready; {@link SqliteStateStore.durable} waits for
 *   it. A write outside every group commits the shared transaction at once, its own included.
 * - Single writer: the connection runs in `locking_mode = EXCLUSIVE` and takes the write lock at
 *   {@link SqliteStateStore.open}, holding it until {@link SqliteStateStore.close}. Another process
 *   (or connection) opening the same file waits `busyTimeoutMs`, then is refused with `StateError`
 *   `io`; it can neither read nor write while this store is open. (Exclusive mode also keeps the WAL
 *   index in process memory: no `-shm` file.)
 * - Every row read back is validated; one that does not parse is `StateError` `corrupt`, naming the
 *   table and key. Records are validated before they are written too (`corrupt`, naming the field).
 * - {@link SqliteStateStore.transaction} nests: an inner call joins the outer transaction as a
 *   savepoint (an inner throw the caller catches undoes only the inner writes).
 */
export class SqliteStateStore implements StateStore {
  /** The schema version the store is at. */
  readonly schemaVersion: number;
  private db: Database.Database | null;
  private readonly targets: Table<TargetRecord>;
  private readonly orders: Table<OrderRecord>;
  private readonly placements: Table<PlacementRecord>;
  private readonly unsettled: Table<UnsettledRecord>;
  private readonly idempotency: Table<IdempotencyRecord>;
  private readonly pruneKeys: Database.Statement;
  private readonly reschedules: Table<RescheduleRecord>;
  private readonly alerts: Table<AlertRecord>;
  private readonly nodeMeta: Table<NodeMetaRecord>;
  private readonly jobs: Table<JobRecord>;
  private readonly jobVersions: Table<JobVersionRecord>;
  private readonly jobVersionGet: Database.Statement;
  private readonly jobVersionList: Database.Statement;
  private readonly jobVersionInsert: Database.Statement;
  private readonly jobInstances: Table<JobInstanceRecord>;
  private readonly jobInstancesOf: Database.Statement;
  private readonly revocationAcks: Table<RevocationAckRecord>;
  private readonly revocationList: Table<HeldRevocationList>;
  private readonly placementsByNode: Database.Statement;
  private readonly targetIdsByUrl: Database.Statement;
  private readonly tx: Database.Transaction<(fn: () => unknown) => unknown>;
  private readonly group: GroupCommit;
  private readonly targetWatchers: ((nodeId: string) => void)[] = [];

  private constructor(db: Database.Database, schemaVersion: number) {
    this.db = db;
    this.schemaVersion = schemaVersion;
    this.targets = new Table(db, TARGETS);
    this.orders = new Table(db, ORDERS);
    this.placements = new Table(db, PLACEMENTS);
    this.unsettled = new Table(db, UNSETTLED);
    this.idempotency = new Table(db, IDEMPOTENCY_KEYS);
    this.pruneKeys = db.prepare('DELETE FROM idempotency_keys WHERE created_at_ms < ?');
    this.reschedules = new Table(db, RESCHEDULES);
    this.alerts = new Table(db, ALERTS);
    this.nodeMeta = new Table(db, NODE_META);
    this.jobs = new Table(db, JOBS);
    // Job versions are keyed by (job, version) and written once: their own statements, the table's codec.
    this.jobVersions = new Table(db, JOB_VERSIONS);
    const versionCols = JOB_VERSIONS.columns.map(q).join(', ');
    this.jobVersionGet = db.prepare(`SELECT ${versionCols} FROM job_versions WHERE job = ? AND version = ?`);
    this.jobVersionList = db.prepare(
      `SELECT ${versionCols} FROM job_versions WHERE job = ? ORDER BY version`,
    );
    this.jobVersionInsert = db.prepare(
      `INSERT INTO job_versions (${versionCols}) VALUES (${JOB_VERSIONS.columns.map(() => '?').join(', ')})`,
    );
    this.jobInstances = new Table(db, JOB_INSTANCES);
    this.jobInstancesOf = db.prepare(
      `SELECT ${JOB_INSTANCES.columns.map(q).join(', ')} FROM job_instances WHERE job = ? ORDER BY placed_at_ms, instance_id`,
    );
    this.revocationAcks = new Table(db, REVOCATION_ACKS);
    this.revocationList = new Table(db, REVOCATION_LIST);
    this.placementsByNode = db.prepare(
      `SELECT ${PLACEMENTS.columns.map(q).join(', ')} FROM placements WHERE node_id = ? ORDER BY placed_at_ms, instance_id`,
    );
    this.targetIdsByUrl = db.prepare('SELECT node_id FROM targets WHERE url = ? ORDER BY node_id').pluck();
    this.tx = db.transaction((fn: () => unknown) => fn());
    this.group = new GroupCommit(() => this.live());
  }

  /**
   * Opens (creating when needed) the state database at `path` (`:memory:` for a private in-memory
   * one), takes its lock and brings its schema up to date. Refuses with `StateError`: `io` when the
   * file cannot be opened or another connection holds it, `schema` when it is at a newer schema
   * version than this code knows (nothing is written then) or is not a Heddle state database,
   * `corrupt` when it is damaged.
   */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStateStore {
    if (path !== ':memory:') prepareFile(path);
    let db: Database.Database;
    try {
      db = new Database(path, { timeout: options.busyTimeoutMs ?? 2000 });
    } catch (error) {
      throw toStateError(error, 'open');
    }
    try {
      // Before the first access, so WAL never uses shared memory and locks are held until close.
      db.pragma('locking_mode = EXCLUSIVE');
      // A newer schema is refused here, before anything (even the journal mode) is written.
      checkSchemaVersion(db);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      // Takes the write lock now, not at the first write; EXCLUSIVE mode keeps it until close.
      db.transaction(() => undefined).exclusive();
      const version = migrate(db);
      return new SqliteStateStore(db, version);
    } catch (error) {
      db.close();
      throw toStateError(error, 'open');
    }
  }

  transaction<T>(fn: () => T): T {
    const tx = this.tx;
    this.live();
    this.group.beforeWrite();
    let out: T;
    try {
      // cast: better-sqlite3's transaction wrapper returns the function's own result
      out = this.group.nested(() => tx.immediate(fn)) as T;
    } catch (error) {
      throw toStateError(error, 'transaction');
    }
    this.group.afterWrite();
    return out;
  }

  /**
   * Runs `fn` with group commit (see `StateStore.grouped`): its writes join one transaction shared
   * with the other groups running, committed with one fsync once the event loop has run what is
   * ready; {@link SqliteStateStore.durable} waits for it.
   */
  grouped<T>(fn: () => Promise<T>): Promise<T> {
    return this.group.grouped(fn);
  }

  /** Resolves once every write made before the call is durable (see `StateStore.durable`). */
  durable(): Promise<void> {
    return this.group.durable().catch((error: unknown) => {
      throw toStateError(error, 'commit');
    });
  }

  /** Transactions committed by group commit so far (each one fsync). */
  get groupCommits(): number {
    return this.group.batches;
  }

  /**
   * Calls `listener` with the node id of every target or node meta record (labels, cordon) written or
   * removed (see `StateStore.watchTargets`).
   */
  watchTargets(listener: (nodeId: string) => void): void {
    this.targetWatchers.push(listener);
  }

  getTarget(nodeId: string): TargetRecord | undefined {
    return this.run('read', () => this.targets.get(nodeId));
  }
  listTargets(): TargetRecord[] {
    return this.run('read', () => this.targets.list());
  }
  targetIdsAt(url: string): string[] {
    // cast: the statement plucks node_id, a TEXT NOT NULL column
    return this.run('read', () => this.targetIdsByUrl.all(url) as string[]);
  }
  putTarget(target: TargetRecord): void {
    this.run('write', () => this.targets.put(target));
    for (const w of this.targetWatchers) w(target.node_id);
  }
  removeTarget(nodeId: string): boolean {
    const removed = this.run('write', () => this.targets.remove(nodeId));
    for (const w of this.targetWatchers) w(nodeId);
    return removed;
  }

  getOrder(orderId: string): OrderRecord | undefined {
    return this.run('read', () => this.orders.get(orderId));
  }
  listOrders(): OrderRecord[] {
    return this.run('read', () => this.orders.list());
  }
  putOrder(order: OrderRecord): void {
    this.run('write', () => this.orders.put(order));
  }
  removeOrder(orderId: string): boolean {
    return this.run('write', () => this.orders.remove(orderId));
  }

  getPlacement(instanceId: string): PlacementRecord | undefined {
    return this.run('read', () => this.placements.get(instanceId));
  }
  listPlacements(nodeId?: string): PlacementRecord[] {
    return this.run('read', () =>
      nodeId === undefined
        ? this.placements.list()
        : this.placementsByNode.all(nodeId).map((row) => this.placements.decode(row)),
    );
  }
  putPlacement(placement: PlacementRecord): void {
    this.run('write', () => this.placements.put(placement));
  }
  removePlacement(instanceId: string): boolean {
    return this.run('write', () => this.placements.remove(instanceId));
  }

  /** Every idempotency key, oldest first (for copying a state; the plane itself never lists them). */
  listIdempotencyKeys(): IdempotencyRecord[] {
    return this.run('read', () => this.idempotency.list());
  }
  getIdempotencyKey(key: string): IdempotencyRecord | undefined {
    return this.run('read', () => this.idempotency.get(key));
  }
  putIdempotencyKey(record: IdempotencyRecord): void {
    this.run('write', () => this.idempotency.put(record));
  }
  removeIdempotencyKey(key: string): boolean {
    return this.run('write', () => this.idempotency.remove(key));
  }
  pruneIdempotencyKeys(beforeMs: number): number {
    return this.run('write', () => this.pruneKeys.run(beforeMs).changes);
  }

  getUnsettled(decisionId: string): UnsettledRecord | undefined {
    return this.run('read', () => this.unsettled.get(decisionId));
  }
  listUnsettled(): UnsettledRecord[] {
    return this.run('read', () => this.unsettled.list());
  }
  putUnsettled(record: UnsettledRecord): void {
    this.run('write', () => this.unsettled.put(record));
  }
  removeUnsettled(decisionId: string): boolean {
    return this.run('write', () => this.unsettled.remove(decisionId));
  }

  // Capacity shared by several controllers (schema v10; docs/state.md).
  #placeClaims: Table<PlaceClaimRecord> | undefined;
  #nodeLoad: Database.Statement | undefined;
  #pruneClaims: Database.Statement | undefined;
  private get placeClaims(): Table<PlaceClaimRecord> {
    this.#placeClaims ??= new Table(this.live(), PLACE_CLAIMS);
    return this.#placeClaims;
  }
  getPlaceClaim(claimId: string): PlaceClaimRecord | undefined {
    return this.run('read', () => this.placeClaims.get(claimId));
  }
  listPlaceClaims(): PlaceClaimRecord[] {
    return this.run('read', () => this.placeClaims.list());
  }
  putPlaceClaim(record: PlaceClaimRecord): void {
    this.run('write', () => this.placeClaims.put(record));
  }
  removePlaceClaim(claimId: string): boolean {
    return this.run('write', () => this.placeClaims.remove(claimId));
  }
  nodeLoad(nodeId: string, claimsSinceMs: number): NodeLoad {
    return this.run('read', () => {
      this.#nodeLoad ??= this.live().prepare(nodeLoadSql('@node', '@since'));
      const rows = this.#nodeLoad.all({ node: nodeId, since: claimsSinceMs });
      // cast: better-sqlite3 types rows unknown; the statement selects k, n, ram, cpu
      return nodeLoadOf(rows as Record<string, unknown>[]);
    });
  }
  prunePlaceClaims(nodeId: string, beforeMs: number): number {
    return this.run('write', () => {
      this.#pruneClaims ??= this.live().prepare(
        'DELETE FROM place_claims WHERE node_id = ? AND claimed_at_ms < ?',
      );
      return this.#pruneClaims.run(nodeId, beforeMs).changes;
    });
  }

  getReschedule(instanceId: string): RescheduleRecord | undefined {
    return this.run('read', () => this.reschedules.get(instanceId));
  }
  listReschedules(): RescheduleRecord[] {
    return this.run('read', () => this.reschedules.list());
  }
  putReschedule(record: RescheduleRecord): void {
    this.run('write', () => this.reschedules.put(record));
  }
  removeReschedule(instanceId: string): boolean {
    return this.run('write', () => this.reschedules.remove(instanceId));
  }

  getAlert(alertId: string): AlertRecord | undefined {
    return this.run('read', () => this.alerts.get(alertId));
  }
  listAlerts(): AlertRecord[] {
    return this.run('read', () => this.alerts.list());
  }
  putAlert(record: AlertRecord): void {
    this.run('write', () => this.alerts.put(record));
  }

  getNodeMeta(nodeId: string): NodeMetaRecord | undefined {
    return this.run('read', () => this.nodeMeta.get(nodeId));
  }
  listNodeMeta(): NodeMetaRecord[] {
    return this.run('read', () => this.nodeMeta.list());
  }
  putNodeMeta(record: NodeMetaRecord): void {
    this.run('write', () => this.nodeMeta.put(record));
    for (const w of this.targetWatchers) w(record.node_id);
  }
  removeNodeMeta(nodeId: string): boolean {
    const removed = this.run('write', () => this.nodeMeta.remove(nodeId));
    for (const w of this.targetWatchers) w(nodeId);
    return removed;
  }

  getJob(name: string): JobRecord | undefined {
    return this.run('read', () => this.jobs.get(name));
  }
  listJobs(): JobRecord[] {
    return this.run('read', () => this.jobs.list());
  }
  putJob(record: JobRecord): void {
    this.run('write', () => this.jobs.put(record));
  }
  removeJob(name: string): boolean {
    return this.run('write', () => this.jobs.remove(name));
  }

  getJobVersion(job: string, version: number): JobVersionRecord | undefined {
    return this.run('read', () => {
      const row = this.jobVersionGet.get(job, version);
      return row === undefined ? undefined : this.jobVersions.decode(row);
    });
  }
  listJobVersions(job: string): JobVersionRecord[] {
    return this.run('read', () => this.jobVersionList.all(job).map((row) => this.jobVersions.decode(row)));
  }
  /** Every version of every job (removed jobs' too), by job and version: for copying a state. */
  listAllJobVersions(): JobVersionRecord[] {
    return this.run('read', () => this.jobVersions.list());
  }
  putJobVersion(record: JobVersionRecord): void {
    this.run('write', () => {
      if (this.jobVersionGet.get(record.job, record.version) !== undefined) {
        throw new StateError(
          'conflict',
          `job ${record.job} version ${record.version} is already stored: a job version is never rewritten`,
          { field: 'job_versions.version' },
        );
      }
      this.jobVersionInsert.run(...this.jobVersions.encode(record));
    });
  }

  getJobInstance(instanceId: string): JobInstanceRecord | undefined {
    return this.run('read', () => this.jobInstances.get(instanceId));
  }
  listJobInstances(job?: string): JobInstanceRecord[] {
    return this.run('read', () =>
      job === undefined
        ? this.jobInstances.list()
        : this.jobInstancesOf.all(job).map((row) => this.jobInstances.decode(row)),
    );
  }
  putJobInstance(record: JobInstanceRecord): void {
    this.run('write', () => this.jobInstances.put(record));
  }
  removeJobInstance(instanceId: string): boolean {
    return this.run('write', () => this.jobInstances.remove(instanceId));
  }

  getRevocationAck(nodeId: string): RevocationAckRecord | undefined {
    return this.run('read', () => this.revocationAcks.get(nodeId));
  }
  listRevocationAcks(): RevocationAckRecord[] {
    return this.run('read', () => this.revocationAcks.list());
  }
  putRevocationAck(record: RevocationAckRecord): void {
    this.run('write', () => this.revocationAcks.put(record));
  }
  removeRevocationAck(nodeId: string): boolean {
    return this.run('write', () => this.revocationAcks.remove(nodeId));
  }

  getRevocationList(): HeldRevocationList | undefined {
    return this.run('read', () => this.revocationList.get('current'));
  }
  putRevocationList(record: HeldRevocationList): void {
    this.run('write', () => this.revocationList.put({ ...record, name: 'current' }));
  }

  /**
   * An application value kept in the `meta` table under `app.<key>` (the store's own keys, such as the
   * schema version, cannot be read or written here), or undefined. `key`: `[a-z0-9_.-]{1,64}`.
   */
  getMeta(key: string): string | undefined {
    const k = appMetaKey(key);
    return this.run('read', () => {
      // cast: better-sqlite3 types a row unknown; the meta table's `value` column is TEXT NOT NULL
      const row = this.live().prepare('SELECT value FROM meta WHERE key = ?').get(k) as
        | { value: string }
        | undefined;
      return row?.value;
    });
  }

  /** Sets an application value in `meta` (see {@link SqliteStateStore.getMeta}); joins a transaction in progress. */
  putMeta(key: string, value: string): void {
    const k = appMetaKey(key);
    this.run('write', () => {
      this.live()
        .prepare(
          'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        )
        .run(k, value);
    });
  }

  /** Every application value in `meta` (see {@link SqliteStateStore.getMeta}), as key and value, by key. */
  listMeta(): [string, string][] {
    return this.run('read', () => {
      // cast: better-sqlite3 types rows unknown; meta has two TEXT NOT NULL columns
      const rows = this.live()
        .prepare("SELECT key, value FROM meta WHERE key LIKE 'app.%' ORDER BY key")
        .all() as {
        key: string;
        value: string;
      }[];
      return rows.map((r): [string, string] => [r.key.slice(4), r.value]);
    });
  }

  /** Closes the database and releases its lock. Later calls throw `StateError` `closed`; closing twice is a no-op. */
  close(): void {
    const db = this.db;
    if (db === null) return;
    this.group.commit();
    this.db = null;
    try {
      db.close();
    } catch (error) {
      throw toStateError(error, 'close');
    }
  }

  private live(): Database.Database {
    if (this.db === null) throw new StateError('closed', 'the state store is closed');
    return this.db;
  }

  private run<T>(what: string, fn: () => T): T {
    this.live();
    const write = what === 'write';
    let out: T;
    try {
      if (write) this.group.beforeWrite();
      out = fn();
    } catch (error) {
      throw toStateError(error, what);
    }
    if (write) this.group.afterWrite();
    return out;
  }
}

function appMetaKey(key: string): string {
  if (!/^[a-z0-9_.-]{1,64}$/.test(key)) {
    throw new TypeError(`meta key ${JSON.stringify(key)} must match [a-z0-9_.-]{1,64}`);
  }
  return `app.${key}`;
}
