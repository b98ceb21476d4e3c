import { randomBytes } from 'node:crypto';
import { StateError } from './errors.js';
import { nodeLoadOf, nodeLoadSql } from './node-load.js';
import { migratePg } from './pg-migrations.js';
import { STATE_CHANNEL } from './pg-notify.js';
import {
  NOT_WATCHING,
  noticePayload,
  PgSharedWatch,
  type SharedWatchOptions,
  type SharedWatchStatus,
} from './pg-shared-watch.js';
import { PgCallError, type PgConnectionConfig, SyncPg, type SyncPgOptions } from './pg-sync.js';
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
  SharedStateChange,
  StateStore,
  TargetRecord,
  UnsettledRecord,
} from './state-store.js';

/** Options of {@link PostgresStateStore.open}. */
export interface PostgresStoreOptions extends SyncPgOptions, SharedWatchOptions {
  /**
   * How many times a transaction that lost a serialization conflict or a deadlock (SQLSTATE 40001,
   * 40P01) is run again before it is refused with `StateError` `store_conflict` (default 8).
   */
  readonly maxRetries?: number;
}

/** SQLSTATEs after which a transaction is run again: serialization failure, deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

const q = (id: string): string => `"${id}"`;

/** The statements of one table. */
class PgTable<R> {
  readonly getSql: string;
  readonly listSql: string;
  readonly putSql: string;
  readonly removeSql: string;

  constructor(readonly spec: TableSpec<R>) {
    const { name, key, columns, orderBy } = spec;
    const cols = columns.map(q).join(', ');
    this.getSql = `SELECT ${cols} FROM ${name} WHERE ${q(key)} = $1`;
    this.listSql = `SELECT ${cols} FROM ${name} ORDER BY ${orderBy}`;
    const updates = columns
      .filter((c) => c !== key)
      .map((c) => `${q(c)} = excluded.${q(c)}`)
      .join(', ');
    this.putSql = `INSERT INTO ${name} (${cols}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (${q(key)}) DO UPDATE SET ${updates}`;
    this.removeSql = `DELETE FROM ${name} WHERE ${q(key)} = $1`;
  }

  /**
   * `sql` (a write with `params` parameters) and, in the same statement (so in the same transaction),
   * a notification on {@link STATE_CHANNEL} with the payload given as the last parameter: delivered to
   * the listeners when the write commits, never when it rolls back. Answers the rows written as `n`.
   */
  static notifying(sql: string, params: number): string {
    return `WITH w AS (${sql} RETURNING 1) SELECT (SELECT count(*) FROM w)::int AS n, pg_notify('${STATE_CHANNEL}', $${params + 1})`;
  }
}

/** A connection given as a URL or as its parts. */
export type PostgresConnection = string | PgConnectionConfig;

/**
 * A {@link StateStore} on a PostgreSQL server, for controllers that outgrow one machine (several
 * controllers can share it). Same records, same validation (every row written and read is checked
 * with the tables' zod schemas), same logical schema versions as `SqliteStateStore`.
 *
 * - Synchronous like the SQLite store: the `pg` client runs in a worker thread and each call blocks
 *   until its answer is in ({@link SyncPg}); a call costs one round trip to the server.
 * - Every write is durable when it returns (the server's `synchronous_commit`): no group commit.
 * - {@link PostgresStateStore.transaction} runs `fn` in a SERIALIZABLE transaction. When the server
 *   aborts it for a serialization conflict or a deadlock (SQLSTATE 40001, 40P01) it is rolled back
 *   and `fn` runs again, up to `maxRetries` times, then `StateError` `store_conflict`. So a
 *   transaction body must only do store calls (and pure computation): anything else it does may
 *   happen more than once. Nested calls join the outer transaction as savepoints.
 * - A lost connection, a server that does not answer within `callTimeoutMs`, or one that cannot be
 *   reached is `StateError` `store_unavailable`; the next call connects again. A write that failed
 *   that way may or may not have landed (outside a transaction); inside one, nothing did.
 */
export class PostgresStateStore implements StateStore {
  /** The schema version the store is at. */
  readonly schemaVersion: number;
  private db: SyncPg | null;
  private readonly maxRetries: number;
  private readonly targetWatchers: ((nodeId: string) => void)[] = [];
  /** Tells this store's notifications from other controllers' (random, one per store). */
  private readonly origin = randomBytes(8).toString('hex');
  private readonly options: PostgresStoreOptions;
  /** Other controllers' writes, watched once someone asks (`watchShared`). */
  private sharedWatch: PgSharedWatch | null = null;
  /** Transaction nesting depth (0: none open). */
  private depth = 0;
  /** Set when a statement of the open transaction hit a retryable conflict. */
  private conflict = false;
  private readonly targets = new PgTable(TARGETS);
  private readonly orders = new PgTable(ORDERS);
  private readonly placements = new PgTable(PLACEMENTS);
  private readonly unsettled = new PgTable(UNSETTLED);
  private readonly idempotency = new PgTable(IDEMPOTENCY_KEYS);
  private readonly reschedules = new PgTable(RESCHEDULES);
  private readonly alerts = new PgTable(ALERTS);
  private readonly nodeMeta = new PgTable(NODE_META);
  private readonly revocationAcks = new PgTable(REVOCATION_ACKS);
  private readonly revocationList = new PgTable(REVOCATION_LIST);
  private readonly jobs = new PgTable(JOBS);
  private readonly jobVersions = new PgTable(JOB_VERSIONS);
  private readonly jobInstances = new PgTable(JOB_INSTANCES);
  private readonly versionCols = JOB_VERSIONS.columns.map(q).join(', ');
  private readonly placementsByNode =
    `SELECT ${PLACEMENTS.columns.map(q).join(', ')} FROM placements WHERE node_id = $1 ORDER BY placed_at_ms, instance_id`;

  private constructor(db: SyncPg, schemaVersion: number, options: PostgresStoreOptions) {
    this.db = db;
    this.schemaVersion = schemaVersion;
    this.maxRetries = options.maxRetries ?? 8;
    this.options = options;
  }

  /**
   * Connects to the database (a `postgres://` URL or its parts) and brings its schema up to date.
   * Refuses with `StateError`: `store_unavailable` when the server cannot be reached, `schema` when
   * the database is at a newer schema version than this code knows or holds tables that are not a
   * Heddle state, `corrupt` for an unreadable version, `io` for any other refusal of the server
   * (a wrong password, a missing database: the message says which).
   */
  static open(connection: PostgresConnection, options: PostgresStoreOptions = {}): PostgresStateStore {
    const config = typeof connection === 'string' ? { connectionString: connection } : connection;
    const db = new SyncPg(config, options);
    try {
      const version = migratePg(db);
      return new PostgresStateStore(db, version, options);
    } catch (error) {
      db.close();
      throw toStateError(error, 'open');
    }
  }

  transaction<T>(fn: () => T): T {
    const db = this.live();
    if (this.depth > 0) return this.savepoint(db, fn);
    for (let attempt = 0; ; attempt++) {
      this.exec(db, 'BEGIN ISOLATION LEVEL SERIALIZABLE', 'begin');
      this.depth = 1;
      this.conflict = false;
      let out: T;
      try {
        out = fn();
        if (isThenable(out))
          throw new TypeError('a transaction function cannot return a promise: the store is synchronous');
        this.exec(db, 'COMMIT', 'commit');
        this.depth = 0;
        return out;
      } catch (error) {
        const retry = this.conflict || isRetryable(error);
        this.depth = 0;
        this.rollback(db);
        if (!retry) throw toStateError(error, 'transaction');
        if (attempt >= this.maxRetries) {
          throw new StateError(
            'store_conflict',
            `transaction gave up after ${attempt + 1} serialization conflicts or deadlocks with other writers`,
            { cause: error },
          );
        }
        // A short random pause, growing with each attempt, so the writers that collided spread out.
        sleepMs(Math.random() * Math.min(200, 2 ** attempt * 5));
      }
    }
  }

  private savepoint<T>(db: SyncPg, fn: () => T): T {
    const name = `sp${this.depth}`;
    this.exec(db, `SAVEPOINT ${name}`, 'savepoint');
    this.depth++;
    try {
      const out = fn();
      if (isThenable(out))
        throw new TypeError('a transaction function cannot return a promise: the store is synchronous');
      this.depth--;
      this.exec(db, `RELEASE SAVEPOINT ${name}`, 'savepoint');
      return out;
    } catch (error) {
      this.depth--;
      // After a conflict the whole transaction is aborted: the outer level rolls back and retries.
      if (!this.conflict) {
        try {
          this.exec(db, `ROLLBACK TO SAVEPOINT ${name}`, 'savepoint');
          this.exec(db, `RELEASE SAVEPOINT ${name}`, 'savepoint');
        } catch {
          // the outer transaction fails on its next statement
        }
      }
      throw error;
    }
  }

  private rollback(db: SyncPg): void {
    try {
      db.query('ROLLBACK', [], true);
    } catch {
      // a lost connection: the server rolled the transaction back
    }
  }

  /**
   * Calls `listener` with the node id of every target or node meta record written or removed
   * through this store (see `StateStore.watchTargets`); other controllers' writes are told by
   * {@link PostgresStateStore.watchShared}.
   */
  watchTargets(listener: (nodeId: string) => void): void {
    this.targetWatchers.push(listener);
  }

  /**
   * Calls `listener` with each change other controllers (other stores) made to the targets, node
   * records and the held revocation list, as they commit (`StateStore.watchShared`; see
   * {@link PgSharedWatch}: the first call starts a listener on a connection of its own). Each of those
   * writes sends its notification in its own statement, so it is delivered exactly when the write
   * commits. Listeners run on this thread, between store calls.
   */
  watchShared(listener: (change: SharedStateChange) => void): void {
    const db = this.live();
    this.sharedWatch ??= new PgSharedWatch(db, this.origin, this.options);
    this.sharedWatch.add(listener);
  }

  /** How the watch of other controllers' writes stands (for health reports and tests). */
  sharedStatus(): SharedWatchStatus {
    return this.sharedWatch?.status() ?? NOT_WATCHING;
  }

  /** Runs a write that notifies other controllers (see `PgTable.notifying`); answers the rows written. */
  private notifyingWrite(
    sql: string,
    params: readonly unknown[],
    kind: 'target' | 'meta' | 'revocations',
    id: string,
  ): number {
    const notice = noticePayload(this.origin, kind, id);
    const row = this.exec(this.live(), PgTable.notifying(sql, params.length), 'write', [...params, notice])
      .rows[0];
    return Number(row?.n ?? 0);
  }

  getTarget(nodeId: string): TargetRecord | undefined {
    return this.get(this.targets, nodeId);
  }
  listTargets(): TargetRecord[] {
    return this.list(this.targets);
  }
  /** The node ids of the targets at `url`: one query on the server, no record read or decoded here. */
  targetIdsAt(url: string): string[] {
    const rows = this.exec(
      this.live(),
      'SELECT node_id FROM targets WHERE url = $1 ORDER BY node_id',
      'read',
      [url],
    ).rows;
    return rows.map((r) => String(r.node_id));
  }
  putTarget(target: TargetRecord): void {
    this.notifyingWrite(this.targets.putSql, this.encode(this.targets, target), 'target', target.node_id);
    for (const w of this.targetWatchers) w(target.node_id);
  }
  removeTarget(nodeId: string): boolean {
    const removed = this.notifyingWrite(this.targets.removeSql, [nodeId], 'target', nodeId) > 0;
    for (const w of this.targetWatchers) w(nodeId);
    return removed;
  }

  getOrder(orderId: string): OrderRecord | undefined {
    return this.get(this.orders, orderId);
  }
  listOrders(): OrderRecord[] {
    return this.list(this.orders);
  }
  putOrder(order: OrderRecord): void {
    this.put(this.orders, order);
  }
  removeOrder(orderId: string): boolean {
    return this.remove(this.orders, orderId);
  }

  getPlacement(instanceId: string): PlacementRecord | undefined {
    return this.get(this.placements, instanceId);
  }
  listPlacements(nodeId?: string): PlacementRecord[] {
    if (nodeId === undefined) return this.list(this.placements);
    const db = this.live();
    return this.exec(db, this.placementsByNode, 'read', [nodeId]).rows.map((r) => decodeRow(PLACEMENTS, r));
  }
  putPlacement(placement: PlacementRecord): void {
    this.put(this.placements, placement);
  }
  removePlacement(instanceId: string): boolean {
    return this.remove(this.placements, instanceId);
  }

  /** Every idempotency key, oldest first (for copying a state; the plane itself never lists them). */
  listIdempotencyKeys(): IdempotencyRecord[] {
    return this.list(this.idempotency);
  }
  getIdempotencyKey(key: string): IdempotencyRecord | undefined {
    return this.get(this.idempotency, key);
  }
  putIdempotencyKey(record: IdempotencyRecord): void {
    this.put(this.idempotency, record);
  }
  removeIdempotencyKey(key: string): boolean {
    return this.remove(this.idempotency, key);
  }
  pruneIdempotencyKeys(beforeMs: number): number {
    const db = this.live();
    return this.exec(db, 'DELETE FROM idempotency_keys WHERE created_at_ms < $1', 'write', [beforeMs])
      .rowCount;
  }

  getUnsettled(decisionId: string): UnsettledRecord | undefined {
    return this.get(this.unsettled, decisionId);
  }
  listUnsettled(): UnsettledRecord[] {
    return this.list(this.unsettled);
  }
  putUnsettled(record: UnsettledRecord): void {
    this.put(this.unsettled, record);
  }
  removeUnsettled(decisionId: string): boolean {
    return this.remove(this.unsettled, decisionId);
  }

  // Capacity shared by several controllers (schema v10; docs/state.md).
  private readonly placeClaims = new PgTable(PLACE_CLAIMS);
  private readonly nodeLoadStatement = nodeLoadSql('$1', '$2');
  getPlaceClaim(claimId: string): PlaceClaimRecord | undefined {
    return this.get(this.placeClaims, claimId);
  }
  listPlaceClaims(): PlaceClaimRecord[] {
    return this.list(this.placeClaims);
  }
  putPlaceClaim(record: PlaceClaimRecord): void {
    this.put(this.placeClaims, record);
  }
  removePlaceClaim(claimId: string): boolean {
    return this.remove(this.placeClaims, claimId);
  }
  nodeLoad(nodeId: string, claimsSinceMs: number): NodeLoad {
    return nodeLoadOf(this.exec(this.live(), this.nodeLoadStatement, 'read', [nodeId, claimsSinceMs]).rows);
  }
  prunePlaceClaims(nodeId: string, beforeMs: number): number {
    const sql = 'DELETE FROM place_claims WHERE node_id = $1 AND claimed_at_ms < $2';
    return this.exec(this.live(), sql, 'write', [nodeId, beforeMs]).rowCount;
  }

  getReschedule(instanceId: string): RescheduleRecord | undefined {
    return this.get(this.reschedules, instanceId);
  }
  listReschedules(): RescheduleRecord[] {
    return this.list(this.reschedules);
  }
  putReschedule(record: RescheduleRecord): void {
    this.put(this.reschedules, record);
  }
  removeReschedule(instanceId: string): boolean {
    return this.remove(this.reschedules, instanceId);
  }

  getAlert(alertId: string): AlertRecord | undefined {
    return this.get(this.alerts, alertId);
  }
  listAlerts(): AlertRecord[] {
    return this.list(this.alerts);
  }
  putAlert(record: AlertRecord): void {
    this.put(this.alerts, record);
  }

  getNodeMeta(nodeId: string): NodeMetaRecord | undefined {
    return this.get(this.nodeMeta, nodeId);
  }
  listNodeMeta(): NodeMetaRecord[] {
    return this.list(this.nodeMeta);
  }
  putNodeMeta(record: NodeMetaRecord): void {
    this.notifyingWrite(this.nodeMeta.putSql, this.encode(this.nodeMeta, record), 'meta', record.node_id);
    for (const w of this.targetWatchers) w(record.node_id);
  }
  removeNodeMeta(nodeId: string): boolean {
    const removed = this.notifyingWrite(this.nodeMeta.removeSql, [nodeId], 'meta', nodeId) > 0;
    for (const w of this.targetWatchers) w(nodeId);
    return removed;
  }

  getJob(name: string): JobRecord | undefined {
    return this.get(this.jobs, name);
  }
  listJobs(): JobRecord[] {
    return this.list(this.jobs);
  }
  putJob(record: JobRecord): void {
    this.put(this.jobs, record);
  }
  removeJob(name: string): boolean {
    return this.remove(this.jobs, name);
  }

  getJobVersion(job: string, version: number): JobVersionRecord | undefined {
    const sql = `SELECT ${this.versionCols} FROM job_versions WHERE job = $1 AND version = $2`;
    const row = this.exec(this.live(), sql, 'read', [job, version]).rows[0];
    return row === undefined ? undefined : decodeRow(JOB_VERSIONS, row);
  }
  listJobVersions(job: string): JobVersionRecord[] {
    const sql = `SELECT ${this.versionCols} FROM job_versions WHERE job = $1 ORDER BY version`;
    return this.exec(this.live(), sql, 'read', [job]).rows.map((r) => decodeRow(JOB_VERSIONS, r));
  }
  /** Every version of every job (removed jobs' too), by job and version: for copying a state. */
  listAllJobVersions(): JobVersionRecord[] {
    return this.list(this.jobVersions);
  }
  /**
   * Stores a new job version; one already stored is never rewritten (`StateError` `conflict`,
   * checked by the insert itself, so two controllers writing the same version cannot both win).
   */
  putJobVersion(record: JobVersionRecord): void {
    const values = encodeRecord(JOB_VERSIONS, record, (b) => b);
    const sql = `INSERT INTO job_versions (${this.versionCols}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (job, version) DO NOTHING`;
    if (this.exec(this.live(), sql, 'write', values).rowCount === 0) {
      throw new StateError(
        'conflict',
        `job ${record.job} version ${record.version} is already stored: a job version is never rewritten`,
        { field: 'job_versions.version' },
      );
    }
  }

  getJobInstance(instanceId: string): JobInstanceRecord | undefined {
    return this.get(this.jobInstances, instanceId);
  }
  listJobInstances(job?: string): JobInstanceRecord[] {
    if (job === undefined) return this.list(this.jobInstances);
    const sql = `SELECT ${JOB_INSTANCES.columns.map(q).join(', ')} FROM job_instances WHERE job = $1 ORDER BY placed_at_ms, instance_id`;
    return this.exec(this.live(), sql, 'read', [job]).rows.map((r) => decodeRow(JOB_INSTANCES, r));
  }
  putJobInstance(record: JobInstanceRecord): void {
    this.put(this.jobInstances, record);
  }
  removeJobInstance(instanceId: string): boolean {
    return this.remove(this.jobInstances, instanceId);
  }

  getRevocationAck(nodeId: string): RevocationAckRecord | undefined {
    return this.get(this.revocationAcks, nodeId);
  }
  listRevocationAcks(): RevocationAckRecord[] {
    return this.list(this.revocationAcks);
  }
  putRevocationAck(record: RevocationAckRecord): void {
    this.put(this.revocationAcks, record);
  }
  removeRevocationAck(nodeId: string): boolean {
    return this.remove(this.revocationAcks, nodeId);
  }

  getRevocationList(): HeldRevocationList | undefined {
    return this.get(this.revocationList, 'current');
  }
  putRevocationList(record: HeldRevocationList): void {
    const values = this.encode(this.revocationList, { ...record, name: 'current' });
    this.notifyingWrite(this.revocationList.putSql, values, 'revocations', '-');
  }

  /**
   * An application value kept in the `meta` table under `app.<key>` (as `SqliteStateStore.getMeta`),
   * or undefined. `key`: `[a-z0-9_.-]{1,64}`.
   */
  getMeta(key: string): string | undefined {
    const k = appMetaKey(key);
    const value = this.exec(this.live(), 'SELECT value FROM meta WHERE key = $1', 'read', [k]).rows[0]?.value;
    return typeof value === 'string' ? value : undefined;
  }

  /** Sets an application value in `meta` (see {@link PostgresStateStore.getMeta}); joins a transaction in progress. */
  putMeta(key: string, value: string): void {
    const k = appMetaKey(key);
    this.exec(
      this.live(),
      'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      'write',
      [k, value],
    );
  }

  /**
   * Empties every table of the state (their schema stays) and the application values of `meta`,
   * in one transaction: for `heddle state migrate --force` onto a database that holds a state.
   */
  clearAll(): void {
    this.transaction(() => {
      const tables = this.exec(
        this.live(),
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'meta' ORDER BY tablename",
        'read',
      ).rows.map((r) => `"${String(r.tablename)}"`);
      if (tables.length > 0) this.exec(this.live(), `TRUNCATE ${tables.join(', ')}`, 'write');
      this.exec(this.live(), "DELETE FROM meta WHERE key LIKE 'app.%'", 'write');
    });
  }

  /** Every application value in `meta` (see {@link PostgresStateStore.getMeta}), as key and value, by key. */
  listMeta(): [string, string][] {
    const rows = this.exec(
      this.live(),
      "SELECT key, value FROM meta WHERE key LIKE 'app.%' ORDER BY key",
      'read',
    ).rows;
    return rows.map((r): [string, string] => [String(r.key).slice(4), String(r.value)]);
  }

  /**
   * Runs one statement of the caller's own on this store's connection (joining a transaction in
   * progress), with the store's error mapping: for tools (`heddle state migrate`) and tests.
   */
  query(sql: string, params: readonly unknown[] = []): { rows: Record<string, unknown>[]; rowCount: number } {
    return this.exec(this.live(), sql, 'query', params);
  }

  /** Closes the connection. Later calls throw `StateError` `closed`; closing twice is a no-op. */
  close(): void {
    const db = this.db;
    if (db === null) return;
    this.db = null;
    this.sharedWatch?.close();
    this.sharedWatch = null;
    db.close();
  }

  private live(): SyncPg {
    if (this.db === null) throw new StateError('closed', 'the state store is closed');
    return this.db;
  }

  private exec(db: SyncPg, sql: string, what: string, params: readonly unknown[] = []) {
    try {
      // Inside a transaction every statement must run on the connection that began it.
      return db.query(sql, params, this.depth > 0);
    } catch (error) {
      if (this.depth > 0 && isRetryable(error)) this.conflict = true;
      throw toStateError(error, what);
    }
  }

  private get<R>(t: PgTable<R>, key: string): R | undefined {
    const row = this.exec(this.live(), t.getSql, 'read', [key]).rows[0];
    return row === undefined ? undefined : decodeRow(t.spec, row);
  }

  private list<R>(t: PgTable<R>): R[] {
    return this.exec(this.live(), t.listSql, 'read').rows.map((r) => decodeRow(t.spec, r));
  }

  private put<R>(t: PgTable<R>, record: R): void {
    this.exec(this.live(), t.putSql, 'write', this.encode(t, record));
  }

  private encode<R>(t: PgTable<R>, record: R): unknown[] {
    return encodeRecord(t.spec, record, (b) => b);
  }

  private remove<R>(t: PgTable<R>, key: string): boolean {
    return this.exec(this.live(), t.removeSql, 'write', [key]).rowCount > 0;
  }
}

function isThenable(v: unknown): boolean {
  // cast: probing an unknown value for a `then` method
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

function isRetryable(error: unknown): boolean {
  const cause = error instanceof StateError ? error.cause : error;
  return cause instanceof PgCallError && cause.sqlstate !== null && RETRYABLE.has(cause.sqlstate);
}

/** Blocks the thread for `ms` (the store is synchronous; only between transaction retries). */
function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(1, Math.round(ms)));
}

/** Maps a PostgreSQL failure to a `StateError`: `store_unavailable`, `store_conflict` or `io`. */
function toStateError(error: unknown, what: string): unknown {
  if (error instanceof StateError || !(error instanceof PgCallError)) return error;
  if (error.lost) {
    return new StateError(
      'store_unavailable',
      `the PostgreSQL state database is unavailable (${what}): ${error.message}`,
      {
        cause: error,
      },
    );
  }
  if (error.sqlstate !== null && RETRYABLE.has(error.sqlstate)) {
    return new StateError(
      'store_conflict',
      `${what} conflicted with another writer (SQLSTATE ${error.sqlstate}): ${error.message}`,
      {
        cause: error,
      },
    );
  }
  return new StateError(
    'io',
    `state database ${what} failed (SQLSTATE ${error.sqlstate ?? 'none'}): ${error.message}`,
    {
      cause: error,
    },
  );
}

function appMetaKey(key: string): string {
  if (!/^[a-z0-9_.-]{1,64}$/.test(key)) {
    throw new TypeError(`meta key ${JSON.stringify(key)} must match [a-z0-9_.-]{1,64}`);
  }
  return `app.${key}`;
}
