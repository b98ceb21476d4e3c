import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { StateError } from './errors.js';
import { type ListenerEvent, PgNotifyListener } from './pg-notify.js';
import { PG_WORKER_SOURCE } from './pg-worker-source.js';

/** Where a PostgreSQL server is and who to log in as (the fields of `pg`'s client config). */
export interface PgConnectionConfig {
  /** `postgres://user:password@host:port/database` (the other fields override its parts). */
  readonly connectionString?: string;
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
  readonly password?: string;
}

/** Options of {@link SyncPg}. */
export interface SyncPgOptions {
  /** How long one call may take, connecting included, before it is `store_unavailable` (ms, default 15000). */
  readonly callTimeoutMs?: number;
  /** How long opening a connection may take (ms, default 5000). */
  readonly connectTimeoutMs?: number;
  /** The `application_name` the server shows for the connection (default `heddle-controller`). */
  readonly applicationName?: string;
  /**
   * After a call the server did not answer within `callTimeoutMs`, how long later calls fail at once
   * (`lost`, without asking the server) before one is tried again (ms, default `callTimeoutMs`; 0:
   * never). Each waiting call blocks the calling thread, so without this a controller cut off from its
   * database would spend all its time waiting (its API, its timers and its leadership lapse starved).
   */
  readonly failFastMs?: number;
}

/** The rows and row count of a statement. */
export interface SyncPgResult {
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number;
}

/** A statement the server refused (it has a SQLSTATE), or a lost connection (`lost`). */
export class PgCallError extends Error {
  constructor(
    message: string,
    /** The server's SQLSTATE, or null when there was no answer. */
    readonly sqlstate: string | null,
    /** The connection is gone (or never came up): the server may not have run the statement. */
    readonly lost: boolean,
  ) {
    super(message);
    this.name = 'PgCallError';
  }
}

interface Answer {
  readonly id: number;
  readonly ok: boolean;
  readonly conn?: number;
  readonly rows?: Record<string, unknown>[];
  readonly rowCount?: number;
  readonly sqlstate?: string | null;
  readonly lost?: boolean;
  readonly message?: string;
}

/**
 * The connection with its URL's parts overridden by the fields given beside it (`pg` itself lets the
 * URL win), as a URL when there is one.
 */
function withOverrides(c: PgConnectionConfig): PgConnectionConfig {
  if (c.connectionString === undefined) return c;
  let u: URL;
  try {
    u = new URL(c.connectionString);
  } catch (cause) {
    throw new StateError('io', 'the PostgreSQL connection URL does not parse', { cause });
  }
  if (c.host !== undefined) u.hostname = c.host;
  if (c.port !== undefined) u.port = String(c.port);
  if (c.database !== undefined) u.pathname = `/${encodeURIComponent(c.database)}`;
  if (c.user !== undefined) u.username = encodeURIComponent(c.user);
  if (c.password !== undefined) u.password = encodeURIComponent(c.password);
  return { connectionString: u.toString() };
}

/** Resolves the `pg` package (an optional peer dependency) or refuses with `StateError` `io`. */
function resolvePg(): string {
  try {
    return createRequire(import.meta.url).resolve('pg');
  } catch (cause) {
    throw new StateError('io', 'the PostgreSQL state store needs the `pg` package: install it (npm i pg)', {
      cause,
    });
  }
}

/**
 * A synchronous PostgreSQL connection: the `pg` client runs in a worker thread; each call posts the
 * statement to it and blocks the calling thread with `Atomics.wait` on a shared flag until the
 * worker has answered, then takes the answer with `receiveMessageOnPort`. Every call costs one
 * round trip to the server plus two thread hand-offs, and the calling thread does nothing else
 * meanwhile. Calls are serial: one connection, one statement at a time (so a transaction is simply
 * the statements between BEGIN and COMMIT). A call that takes longer than `callTimeoutMs` ends the
 * worker (and with it the connection, so the server rolls back an open transaction) and throws
 * {@link PgCallError} `lost`; calls within `failFastMs` after it fail the same way at once, and the
 * next one starts a new worker.
 */
export class SyncPg {
  private readonly pgPath: string;
  private readonly config: Record<string, unknown>;
  private readonly callTimeoutMs: number;
  private readonly failFastMs: number;
  /** Until when (Date.now) calls fail at once, after one the server did not answer in time. */
  private failFastUntil = 0;
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private flag: Int32Array = new Int32Array(new SharedArrayBuffer(4));
  private seq = 0;
  /** The connection the last statement ran on (-1: none yet on this worker). */
  private conn = -1;

  constructor(connection: PgConnectionConfig, options: SyncPgOptions = {}) {
    this.pgPath = resolvePg();
    this.callTimeoutMs = options.callTimeoutMs ?? 15_000;
    this.failFastMs = options.failFastMs ?? this.callTimeoutMs;
    const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.config = {
      ...withOverrides(connection),
      connectionTimeoutMillis: Math.min(connectTimeoutMs, this.callTimeoutMs),
      keepAlive: true,
      application_name: options.applicationName ?? 'heddle-controller',
    };
  }

  /**
   * Runs one statement (`$1`-style parameters); throws {@link PgCallError}. With `sameConnection`
   * it runs only on the connection the previous statement ran on (a statement of an open
   * transaction): when that connection is gone it is `lost`, never run on a new connection.
   */
  query(sql: string, params: readonly unknown[] = [], sameConnection = false): SyncPgResult {
    const a = this.call({ op: 'query', sql, params, ...(sameConnection ? { conn: this.conn } : {}) });
    if (!a.ok) throw new PgCallError(a.message ?? 'query failed', a.sqlstate ?? null, a.lost === true);
    if (typeof a.conn === 'number') this.conn = a.conn;
    return { rows: a.rows ?? [], rowCount: a.rowCount ?? 0 };
  }

  /**
   * Starts listening on `channel` on a connection of its own to the same server, as the same user
   * (see {@link PgNotifyListener}); its events reach `onEvent` on this thread.
   */
  listen(
    channel: string,
    onEvent: (e: ListenerEvent) => void,
    options: { readonly retryMs?: number; readonly checkMs?: number } = {},
  ): PgNotifyListener {
    return new PgNotifyListener({
      pgPath: this.pgPath,
      config: { ...this.config, application_name: `${String(this.config.application_name)}-listen` },
      channel,
      onEvent,
      ...options,
    });
  }

  /** Ends the connection and the worker. Idempotent. */
  close(): void {
    if (this.worker === null) return;
    try {
      this.call({ op: 'close' }, 2000);
    } catch {
      // ending anyway
    }
    this.drop();
  }

  private start(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    const shared = new SharedArrayBuffer(4);
    this.flag = new Int32Array(shared);
    this.seq = 0;
    this.conn = -1;
    const worker = new Worker(PG_WORKER_SOURCE, {
      eval: true,
      workerData: { pgPath: this.pgPath, config: this.config, shared, port: port2 },
      transferList: [port2],
    });
    worker.unref();
    // A worker that dies is replaced at the next call (its error is answered as a lost connection).
    worker.on('error', () => undefined);
    port1.unref();
    this.worker = worker;
    this.port = port1;
    return port1;
  }

  private drop(): void {
    const w = this.worker;
    this.port?.close();
    this.worker = null;
    this.port = null;
    if (w !== null) void w.terminate();
  }

  private call(msg: Record<string, unknown>, timeoutMs = this.callTimeoutMs): Answer {
    if (Date.now() < this.failFastUntil) {
      return {
        id: 0,
        ok: false,
        sqlstate: null,
        lost: true,
        message: `no answer from the database within ${this.callTimeoutMs} ms a moment ago (not asked again before ${new Date(this.failFastUntil).toISOString()})`,
      };
    }
    const port = this.port ?? this.start();
    const id = ++this.seq;
    port.postMessage({ ...msg, id });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = Atomics.load(this.flag, 0);
      if (done === id) break;
      const left = deadline - Date.now();
      if (left <= 0) {
        this.drop();
        this.failFastUntil = Date.now() + this.failFastMs;
        return {
          id,
          ok: false,
          sqlstate: null,
          lost: true,
          message: `no answer from the database within ${timeoutMs} ms`,
        };
      }
      Atomics.wait(this.flag, 0, done, left);
    }
    for (;;) {
      const m = receiveMessageOnPort(port);
      if (m === undefined) {
        this.drop();
        return { id, ok: false, sqlstate: null, lost: true, message: 'the database worker answered nothing' };
      }
      // cast: the worker posts only Answer objects (pg-worker-source.ts)
      const a = m.message as Answer;
      if (a.id === id) return a;
    }
  }
}
