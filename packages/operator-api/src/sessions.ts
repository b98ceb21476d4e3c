import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The name of the dashboard's session cookie. */
export const SESSION_COOKIE = 'heddle_session';

/** How long a dashboard session lasts without use (12 hours). */
export const SESSION_TTL_MS: number = 12 * 60 * 60 * 1000;

/** The header a cookie-authenticated request that changes something must carry (value `1`). */
export const CSRF_HEADER = 'x-heddle-request';

/** Most sessions held at once (the oldest is dropped past it). */
const MAX_SESSIONS = 256;

/**
 * The dashboard's sessions (docs/operator-api.md, "Dashboard sessions"): a login exchanges an
 * operator's token (the home's `api.token` or a scoped operator token) for a random session id carried in an `HttpOnly; SameSite=Strict` cookie, so the
 * token is never kept by the browser, put in a URL or logged. Sessions live in memory only: a
 * controller restart logs every browser out. A session expires after {@link SESSION_TTL_MS} without use.
 */
export class Sessions {
  readonly #sessions = new Map<string, { readonly until: number; readonly token: string }>();
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(options: { readonly now?: () => number; readonly ttlMs?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  }

  /**
   * Opens a session for the holder of `token` (kept here, in memory only, so that every request of
   * the session is decided again with it); returns the session's id (64 hex).
   */
  open(token: string): string {
    const id = randomBytes(32).toString('hex');
    this.#sessions.set(id, { until: this.#now() + this.#ttlMs, token });
    while (this.#sessions.size > MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    return id;
  }

  /** The token of live session `id` (its expiry is pushed back), or undefined. */
  token(id: string | undefined): string | undefined {
    if (id === undefined) return undefined;
    const s = this.#sessions.get(id);
    if (s === undefined) return undefined;
    const now = this.#now();
    this.#sessions.delete(id);
    if (s.until <= now) return undefined;
    this.#sessions.set(id, { until: now + this.#ttlMs, token: s.token });
    return s.token;
  }

  /** Whether `id` is a live session (its expiry is pushed back when it is). */
  check(id: string | undefined): boolean {
    return this.token(id) !== undefined;
  }

  /** Ends a session. */
  close(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(id);
  }

  /** The `Set-Cookie` value that carries session `id` (an empty id with `Max-Age=0` logs out). */
  cookie(id: string): string {
    const age = id === '' ? 0 : Math.floor(this.#ttlMs / 1000);
    return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${age}`;
  }
}

/** The session id a request's `Cookie` header carries, if any (64 hex). */
export function sessionOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value !== undefined && /^[0-9a-f]{64}$/.test(value)) return value;
  }
  return undefined;
}
