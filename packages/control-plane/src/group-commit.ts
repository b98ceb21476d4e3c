import { AsyncLocalStorage } from 'node:async_hooks';
import type Database from 'better-sqlite3';

/** Which group (if any) the code running now writes in: set by {@link GroupCommit.grouped}. */
const scope = new AsyncLocalStorage<GroupCommit>();

/**
 * Group commit of a SQLite connection (docs/architecture.md, "Group commit"): writes made inside
 * {@link GroupCommit.grouped} (the place path) join one open transaction that is committed (one
 * fsync, `synchronous = FULL`) once the event loop has run what is ready, so that the places in
 * flight share it; such code waits for {@link GroupCommit.durable} before anything that needs its
 * writes on disk (sending a place, answering it). A write made outside a group commits the open
 * transaction at once, its own included, so it stays durable when it returns.
 */
export class GroupCommit {
  readonly #db: () => Database.Database;
  #open = false;
  #waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  #batches = 0;
  #depth = 0;

  /** `db` gives the live connection (and throws once it is closed). */
  constructor(db: () => Database.Database) {
    this.#db = db;
  }

  /** Runs `fn` with its writes (and those of everything it awaits) joining the group. */
  grouped<T>(fn: () => Promise<T>): Promise<T> {
    return scope.run(this, fn);
  }

  /** Whether the code running now writes in this group. */
  get inGroup(): boolean {
    return scope.getStore() === this;
  }

  /** Transactions committed so far (each one fsync). */
  get batches(): number {
    return this.#batches;
  }

  /** Before a write: opens the group's transaction when the write is grouped and none is open. */
  beforeWrite(): void {
    if (this.#open || !this.inGroup) return;
    const db = this.#db();
    if (db.inTransaction) return; // inside an explicit transaction: it commits (or joins a savepoint)
    db.exec('BEGIN IMMEDIATE');
    this.#open = true;
    setImmediate(() => {
      try {
        this.commit();
      } catch {
        // told to those waiting for it (durable() rejects)
      }
    });
  }

  /**
   * Runs `fn` (an explicit transaction of the store) with the commits of {@link afterWrite} held back:
   * inside it the store's transaction is a savepoint of the group's open one, and committing that
   * one from a write within would end the savepoint under its feet (`no such savepoint`).
   */
  nested<T>(fn: () => T): T {
    this.#depth++;
    try {
      return fn();
    } finally {
      this.#depth--;
    }
  }

  /** After a write: a write outside the group commits the open transaction now (after an explicit transaction, once it ended). */
  afterWrite(): void {
    if (this.#open && !this.inGroup && this.#depth === 0) this.commit();
  }

  /**
   * Resolves once every write made before the call is durable (at once when none is pending); rejects
   * with the commit's error when the transaction holding them failed (those writes are undone).
   */
  durable(): Promise<void> {
    if (!this.#open) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /**
   * Commits the open transaction (when one is), and answers those waiting for it; throws (after
   * rolling back and rejecting them) when the commit fails.
   */
  commit(): void {
    if (!this.#open) return;
    this.#open = false;
    const waiters = this.#waiters;
    this.#waiters = [];
    try {
      this.#db().exec('COMMIT');
      this.#batches++;
    } catch (error) {
      try {
        const db = this.#db();
        if (db.inTransaction) db.exec('ROLLBACK');
      } catch {
        // closed or failed again: the transaction is gone with the connection
      }
      for (const w of waiters) w.reject(error);
      throw error;
    }
    for (const w of waiters) w.resolve();
  }
}
