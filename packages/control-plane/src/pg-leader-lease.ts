import pg from 'pg';

/** The leadership lease row as read from the database. */
export interface LeaseRow {
  /** Node id of the controller holding (or that last held) the lease; empty before anyone did. */
  readonly holder: string;
  /** The term: raised by one each time the lease changes hands (or is taken again after lapsing). */
  readonly epoch: number;
  /** When the lease ends, on the database's clock (Unix ms). */
  readonly expiresAtMs: number;
  /** The chain hash of the holder's `controller.leader` event for this term, or null until chained. */
  readonly termEvent: string | null;
  /** The database's clock when the row was read (Unix ms). */
  readonly dbNowMs: number;
}

/** The database of a lease given by its parts (as the PostgreSQL state store's connection). */
export interface LeaseConnection {
  readonly connectionString?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly database?: string | undefined;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
}

/** What one {@link PgLeaderLease.acquire} did. */
export interface AcquireResult {
  /** True when `holder` holds the lease now (renewed, or taken). */
  readonly held: boolean;
  /** True when the lease was taken for a new term by this call (the epoch was raised). */
  readonly newTerm: boolean;
  /** The row after the call. */
  readonly row: LeaseRow;
  /** The row before the call, when this call started a new term (who led before, and their term). */
  readonly previous: LeaseRow | null;
}

const CREATE = `CREATE TABLE IF NOT EXISTS heddle_leader (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  epoch BIGINT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  term_event TEXT
)`;

const SELECT = `SELECT holder, epoch, (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms,
  term_event, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
  FROM heddle_leader WHERE name = $1`;

interface RawRow {
  holder: string;
  epoch: string;
  expires_ms: number;
  term_event: string | null;
  now_ms: number;
}

function toRow(r: RawRow): LeaseRow {
  return {
    holder: r.holder,
    epoch: Number(r.epoch),
    expiresAtMs: Math.floor(r.expires_ms),
    termEvent: r.term_event,
    dbNowMs: Math.floor(r.now_ms),
  };
}

/**
 * The controllers' leadership lease: one row of the table `heddle_leader` in the shared PostgreSQL
 * database (`name`, `holder`, `epoch`, `expires_at`, `term_event`). Expiry is judged on the database's
 * clock only, so the controllers' clocks do not matter. Every statement runs in its own transaction
 * on a connection of a small pool; a lost connection fails that call (the caller tries again).
 */
export class PgLeaderLease {
  readonly #pool: pg.Pool;
  readonly #name: string;
  #ready: Promise<void> | undefined;

  /**
   * A lease named `name` (default `controller`) in the database `connection` names (a `postgres://`
   * URL, or its parts as the PostgreSQL state store takes them).
   * `statementTimeoutMs` bounds each statement and each connection attempt (default 2,000 ms), so a
   * hung database fails a call rather than holding it.
   */
  constructor(
    connection: string | LeaseConnection,
    options: { name?: string; statementTimeoutMs?: number } = {},
  ) {
    const timeout = options.statementTimeoutMs ?? 2_000;
    this.#pool = new pg.Pool({
      ...(typeof connection === 'string' ? { connectionString: connection } : connection),
      max: 2,
      connectionTimeoutMillis: timeout,
      statement_timeout: timeout,
      query_timeout: timeout,
      idleTimeoutMillis: 10_000,
    });
    // A connection that dies while idle must not crash the process: the next call fails instead.
    this.#pool.on('error', () => {});
    this.#name = options.name ?? 'controller';
  }

  async #setup(): Promise<void> {
    this.#ready ??= this.#pool.query(CREATE).then(
      () => undefined,
      (err: unknown) => {
        this.#ready = undefined;
        throw err;
      },
    );
    await this.#ready;
  }

  /** The row now, or undefined before any controller took the lease. */
  async read(): Promise<LeaseRow | undefined> {
    await this.#setup();
    const r = await this.#pool.query<RawRow>(SELECT, [this.#name]);
    const row = r.rows[0];
    return row === undefined ? undefined : toRow(row);
  }

  /**
   * Renews the lease for `holder` when it holds it, or takes it when it lapsed (a new term: the epoch
   * is raised and `term_event` cleared), for `ttlMs` from the database's now. Leaves it alone when
   * another controller holds it unexpired (`held` false). Serialised by a row lock.
   */
  async acquire(holder: string, ttlMs: number): Promise<AcquireResult> {
    await this.#setup();
    const c = await this.#pool.connect();
    let failed = false;
    try {
      await c.query('BEGIN');
      await c.query(
        `INSERT INTO heddle_leader (name, holder, epoch, expires_at, term_event)
         VALUES ($1, '', 0, 'epoch', NULL) ON CONFLICT (name) DO NOTHING`,
        [this.#name],
      );
      const before = toRow((await c.query<RawRow>(`${SELECT} FOR UPDATE`, [this.#name])).rows[0] as RawRow);
      const live = before.expiresAtMs > before.dbNowMs;
      if (live && before.holder !== holder) {
        await c.query('COMMIT');
        return { held: false, newTerm: false, row: before, previous: null };
      }
      const newTerm = !live || before.holder !== holder;
      await c.query(
        `UPDATE heddle_leader SET holder = $2, epoch = epoch + $3,
           expires_at = clock_timestamp() + $4 * interval '1 millisecond',
           term_event = CASE WHEN $3 = 1 THEN NULL ELSE term_event END
         WHERE name = $1`,
        [this.#name, holder, newTerm ? 1 : 0, ttlMs],
      );
      const row = toRow((await c.query<RawRow>(SELECT, [this.#name])).rows[0] as RawRow);
      await c.query('COMMIT');
      return { held: true, newTerm, row, previous: newTerm ? before : null };
    } catch (err) {
      // The connection may be broken or hung: it is thrown away, not rolled back and reused.
      failed = true;
      throw err;
    } finally {
      c.release(failed);
    }
  }

  /** Records the chain hash of the term's `controller.leader` event; false when the term is over. */
  async setTermEvent(holder: string, epoch: number, hash: string): Promise<boolean> {
    await this.#setup();
    const r = await this.#pool.query(
      'UPDATE heddle_leader SET term_event = $4 WHERE name = $1 AND holder = $2 AND epoch = $3',
      [this.#name, holder, epoch, hash],
    );
    return r.rowCount === 1;
  }

  /** Gives the lease up at once when `holder` holds it in `epoch` (a clean shutdown). */
  async release(holder: string, epoch: number): Promise<void> {
    await this.#setup();
    await this.#pool.query(
      `UPDATE heddle_leader SET expires_at = clock_timestamp() WHERE name = $1 AND holder = $2 AND epoch = $3`,
      [this.#name, holder, epoch],
    );
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.#pool.end();
  }
}
