import { type ListenerEvent, type PgNotifyListener, STATE_CHANNEL } from './pg-notify.js';
import type { SyncPg } from './pg-sync.js';
import type { SharedStateChange } from './state-store.js';

/** Options of the watch of other controllers' writes (part of `PostgresStoreOptions`). */
export interface SharedWatchOptions {
  /**
   * How often everything is read again anyway (a `resync`), the fallback for notifications missed
   * (ms, default 10000; 0: never).
   */
  readonly resyncMs?: number;
  /** The notification listener's pause before it connects again after a loss (ms, default 500). */
  readonly listenRetryMs?: number;
  /** How often the listener checks its connection (ms, default 2000; see `PgNotifyListener`). */
  readonly listenCheckMs?: number;
}

/** What `PostgresStateStore.sharedStatus` answers. */
export interface SharedWatchStatus {
  /** A listener runs (someone called `watchShared`). */
  readonly watching: boolean;
  /** LISTEN is in force now. */
  readonly listening: boolean;
  /** Connections the listener made (each followed by a `resync`). */
  readonly connects: number;
  /** Notifications of other controllers received. */
  readonly notices: number;
  /** `resync`s told (connects, periodic, too many notices at once). */
  readonly resyncs: number;
  /** Why the listener's last connection was lost, or null. */
  readonly lastError: string | null;
}

/** The status of a store nobody watches. */
export const NOT_WATCHING: SharedWatchStatus = Object.freeze({
  watching: false,
  listening: false,
  connects: 0,
  notices: 0,
  resyncs: 0,
  lastError: null,
});

/** More notices than this in one turn of the event loop are told as one `resync`. */
const NOTICE_BATCH_MAX = 64;

/**
 * A PostgreSQL state store's watch of the writes other stores (other controllers) make to the
 * shared state (docs/state.md, "Several controllers: what each one sees of the others' writes"): a
 * {@link PgNotifyListener} on `heddle_state`, its notices (`<origin> <kind> <id>`) parsed, this
 * store's own (`origin`) dropped, and told to the watchers as `SharedStateChange`s at the end of the
 * event loop's turn they arrive in (the same change once; more than 64 at once as one `resync`).
 * `resync` is also told each time the listener has (re)connected (what was written while it had no
 * connection was not notified to it) and every `resyncMs`. A watcher that throws is skipped (the
 * next `resync` reads it all again).
 */
export class PgSharedWatch {
  readonly #origin: string;
  readonly #watchers: ((change: SharedStateChange) => void)[] = [];
  readonly #listener: PgNotifyListener;
  readonly #timer: NodeJS.Timeout | null;
  #pending: SharedStateChange[] = [];
  #flushing = false;
  #closed = false;
  #status = { listening: false, connects: 0, notices: 0, resyncs: 0, lastError: NOT_WATCHING.lastError };

  constructor(db: SyncPg, origin: string, options: SharedWatchOptions = {}) {
    this.#origin = origin;
    this.#listener = db.listen(STATE_CHANNEL, (e) => this.#onEvent(e), {
      ...(options.listenRetryMs === undefined ? {} : { retryMs: options.listenRetryMs }),
      ...(options.listenCheckMs === undefined ? {} : { checkMs: options.listenCheckMs }),
    });
    const every = options.resyncMs ?? 10_000;
    this.#timer =
      every > 0 ? setInterval(() => this.#tell({ kind: 'resync', why: 'periodic re-read' }), every) : null;
    this.#timer?.unref();
  }

  /** Adds a watcher. */
  add(watcher: (change: SharedStateChange) => void): void {
    this.#watchers.push(watcher);
  }

  /** How the watch stands. */
  status(): SharedWatchStatus {
    return { watching: !this.#closed, ...this.#status };
  }

  /** Ends the listener and the periodic re-read (idempotent); nothing is told after it. */
  close(): void {
    this.#closed = true;
    this.#listener.close();
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#status.listening = false;
  }

  #onEvent(e: ListenerEvent): void {
    if (e.type === 'listening') {
      this.#status.listening = true;
      this.#status.connects++;
      this.#tell({ kind: 'resync', why: 'notifications (re)connected' });
    } else if (e.type === 'lost') {
      this.#status.listening = false;
      this.#status.lastError = e.message;
    } else {
      for (const payload of e.payloads) {
        const change = parseNotice(payload, this.#origin);
        if (change === undefined) continue;
        this.#status.notices++;
        this.#tell(change);
      }
    }
  }

  /** Queues `change` for the end of this turn of the event loop. */
  #tell(change: SharedStateChange): void {
    this.#pending.push(change);
    if (this.#flushing) return;
    this.#flushing = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushing = false;
    let batch = this.#pending;
    this.#pending = [];
    if (this.#closed) return;
    const resync = batch.find((c) => c.kind === 'resync');
    if (resync !== undefined || batch.length > NOTICE_BATCH_MAX) {
      batch = [resync ?? { kind: 'resync', why: `${batch.length} changes at once` }];
    } else {
      const seen = new Set<string>();
      batch = batch.filter((c) => {
        const key = c.kind === 'target' || c.kind === 'meta' ? `${c.kind} ${c.node_id}` : c.kind;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    for (const c of batch) {
      if (c.kind === 'resync') this.#status.resyncs++;
      for (const w of this.#watchers) {
        try {
          w(c);
        } catch {
          // A watcher's failure (the database down while it reads) is its own: the next resync retries.
        }
      }
    }
  }
}

/** The notice's payload of a write of `kind` about `id` by the store `origin` (see {@link parseNotice}). */
export function noticePayload(origin: string, kind: 'target' | 'meta' | 'revocations', id: string): string {
  return `${origin} ${kind} ${id}`;
}

/** The change a notice tells, or undefined for one of `origin` (the store itself) or one not understood. */
export function parseNotice(payload: string, origin: string): SharedStateChange | undefined {
  const [from, kind, id] = payload.split(' ');
  if (from === origin || from === undefined || id === undefined) return undefined;
  if (kind === 'target' || kind === 'meta') return { kind, node_id: id };
  if (kind === 'revocations') return { kind };
  return undefined;
}
