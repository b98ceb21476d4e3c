import type { SignedCtl } from '@heddle/protocol';
import { CallFailure } from '@heddle/protocol';
import { type CallOptions, type CallResult, type WireClientOptions, WireSession } from './client-session.js';
import { DEFAULT_MAX_CALLS_PER_SESSION } from './limits.js';

/** Default most sessions a {@link WireSessionPool} keeps open: 4,096. */
export const DEFAULT_POOL_MAX_SESSIONS = 4096;

/** Default time a kept session may go unused before the pool closes it: 10 s (a host's own idle close is 30 s). */
export const DEFAULT_POOL_IDLE_MS = 10_000;

/** Options of a {@link WireSessionPool}. */
export interface WireSessionPoolOptions extends WireClientOptions {
  /**
   * Most sessions kept open at once (default {@link DEFAULT_POOL_MAX_SESSIONS}). One more closes the
   * least recently used idle one; when every kept session has a call open, the least recently used
   * is retired (closed once its calls end).
   */
  readonly maxSessions?: number;
  /** A kept session unused for this long is closed (default {@link DEFAULT_POOL_IDLE_MS}). */
  readonly idleMs?: number;
  /**
   * Most calls open at once on one kept session (default 8, the reference host's
   * `max_calls_per_session`); a call beyond it gets a connection of its own, closed after its answer.
   */
  readonly maxCallsPerSession?: number;
}

/** Options of one pooled call: a call's options plus the connect timeout of a new connection. */
export interface PooledCallOptions extends CallOptions {
  /** Time allowed to connect and upgrade when a new connection is needed (default: the pool's). */
  readonly connectTimeoutMs?: number;
}

interface Kept {
  readonly url: string;
  session: WireSession | undefined;
  connecting: Promise<WireSession> | undefined;
  open: number;
  retired: boolean;
  idle: NodeJS.Timeout | undefined;
}

/**
 * Keeps one WebSocket session per host URL open and carries calls on it (docs/protocol.md 13.1): each
 * call is still a separately signed request (its own nonce, target and expiry), so reuse changes
 * nothing the host checks. A session found closed is replaced by a new connection before the call is
 * sent (a call never sent is not lost); a call that fails without an answer retires its session (no
 * new call is sent on it; it closes once its open calls end) and fails exactly as on a connection of
 * its own: Unreachable when not sent, Indeterminate when a mutating call was sent and its answer lost.
 * Sessions unused for `idleMs` are closed, and at most `maxSessions` are kept (least recently used
 * closed first). Kept sockets do not hold the process open; an open call's timer does.
 */
export class WireSessionPool {
  readonly #options: WireClientOptions;
  readonly #maxSessions: number;
  readonly #idleMs: number;
  readonly #maxCalls: number;
  /** By URL, least recently used first (a Map keeps insertion order; use re-inserts). */
  readonly #kept = new Map<string, Kept>();
  #closed = false;
  #connects = 0;

  constructor(options: WireSessionPoolOptions = {}) {
    const { maxSessions, idleMs, maxCallsPerSession, ...client } = options;
    this.#options = client;
    this.#maxSessions = positive(maxSessions ?? DEFAULT_POOL_MAX_SESSIONS, 'maxSessions');
    this.#idleMs = positive(idleMs ?? DEFAULT_POOL_IDLE_MS, 'idleMs');
    this.#maxCalls = positive(maxCallsPerSession ?? DEFAULT_MAX_CALLS_PER_SESSION, 'maxCallsPerSession');
  }

  /** Sessions kept (open or connecting). */
  get size(): number {
    return this.#kept.size;
  }

  /** Connections this pool has opened so far (kept ones and one-off ones). */
  get connects(): number {
    return this.#connects;
  }

  /**
   * Calls the host at `url` with a signed request over its kept session (opened when there is none).
   * `onSent` is called just before the request is written to an open connection. Resolves and
   * rejects as `WireSession.call` does.
   */
  async call(
    url: string,
    signed: SignedCtl,
    options: PooledCallOptions = {},
    onSent?: () => void,
  ): Promise<CallResult> {
    if (this.#closed) throw new CallFailure('unreachable', 'the session pool is closed; not sent');
    const { connectTimeoutMs, ...callOptions } = options;
    const connect = (): Promise<WireSession> => {
      this.#connects++;
      return WireSession.connect(
        url,
        connectTimeoutMs === undefined ? this.#options : { ...this.#options, connectTimeoutMs },
      );
    };
    for (let tries = 0; ; tries++) {
      const kept = this.#touch(url);
      if (kept.open >= this.#maxCalls) {
        // Full: this call gets a connection of its own, as a client without a pool would.
        const own = await connect();
        try {
          onSent?.();
          return await own.call(signed, callOptions);
        } finally {
          await own.close();
        }
      }
      kept.open++;
      clearTimeout(kept.idle);
      let session: WireSession;
      try {
        session = await this.#sessionOf(kept, connect);
      } catch (err) {
        this.#release(kept, true);
        throw err;
      }
      if (!session.isOpen) {
        // Closed since it was kept (the host restarted, or closed it idle): nothing was sent.
        this.#release(kept, true);
        if (tries === 0) continue;
        throw new CallFailure('unreachable', `the connection to ${url} closed before the call; not sent`);
      }
      onSent?.();
      try {
        const r = await session.call(signed, callOptions);
        this.#release(kept, false);
        return r;
      } catch (err) {
        const refused = err instanceof CallFailure && err.code === 'refused';
        this.#release(kept, !refused);
        throw err;
      }
    }
  }

  /** Closes every kept session (their open calls fail as lost); later calls are not sent. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#kept.values()];
    this.#kept.clear();
    await Promise.all(all.map((k) => this.#shut(k)));
  }

  /** The kept entry of `url`, made the most recently used (a new one when none is kept or it is retired). */
  #touch(url: string): Kept {
    let kept = this.#kept.get(url);
    if (kept !== undefined) this.#kept.delete(url);
    if (kept === undefined || kept.retired) {
      kept = { url, session: undefined, connecting: undefined, open: 0, retired: false, idle: undefined };
    }
    this.#kept.set(url, kept);
    this.#bound();
    return kept;
  }

  async #sessionOf(kept: Kept, connect: () => Promise<WireSession>): Promise<WireSession> {
    if (kept.session?.isOpen === true) return kept.session;
    if (kept.connecting === undefined) {
      kept.session = undefined;
      kept.connecting = connect().then(
        (s) => {
          kept.connecting = undefined;
          kept.session = s;
          s.unref();
          // A session the pool no longer keeps (retired, evicted or closed meanwhile) is closed.
          if (kept.retired || this.#kept.get(kept.url) !== kept) this.#closeWhenDone(kept);
          return s;
        },
        (err: unknown) => {
          kept.connecting = undefined;
          throw err;
        },
      );
    }
    return kept.connecting;
  }

  /** One call on `kept` ended; `retire` stops new calls on it (its answer was lost, or it was never made). */
  #release(kept: Kept, retire: boolean): void {
    kept.open--;
    if (retire && kept.session !== undefined) {
      kept.retired = true;
      if (this.#kept.get(kept.url) === kept) this.#kept.delete(kept.url);
    }
    if (kept.retired) this.#closeWhenDone(kept);
    else if (kept.open === 0 && kept.session === undefined && kept.connecting === undefined) {
      // Never connected (the connect failed): nothing to keep.
      if (this.#kept.get(kept.url) === kept) this.#kept.delete(kept.url);
    } else if (kept.open === 0) this.#armIdle(kept);
  }

  #armIdle(kept: Kept): void {
    clearTimeout(kept.idle);
    kept.idle = setTimeout(() => {
      if (kept.open > 0) return;
      if (this.#kept.get(kept.url) === kept) this.#kept.delete(kept.url);
      void this.#shut(kept);
    }, this.#idleMs);
    kept.idle.unref();
  }

  #closeWhenDone(kept: Kept): void {
    if (kept.open === 0) void this.#shut(kept);
  }

  /** Over the bound: close the least recently used idle sessions, else retire the least recently used. */
  #bound(): void {
    if (this.#kept.size <= this.#maxSessions) return;
    for (const kept of this.#kept.values()) {
      if (this.#kept.size <= this.#maxSessions) return;
      if (kept.open > 0 || kept.connecting !== undefined) continue;
      this.#kept.delete(kept.url);
      void this.#shut(kept);
    }
    for (const kept of this.#kept.values()) {
      if (this.#kept.size <= this.#maxSessions) return;
      this.#kept.delete(kept.url);
      kept.retired = true;
      this.#closeWhenDone(kept);
    }
  }

  async #shut(kept: Kept): Promise<void> {
    clearTimeout(kept.idle);
    const s = kept.session;
    kept.session = undefined;
    kept.retired = true;
    if (s !== undefined) await s.close();
  }
}

function positive(v: number, name: string): number {
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer`);
  return v;
}
