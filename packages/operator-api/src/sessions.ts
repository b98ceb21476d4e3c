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
 * The dashboard's sessions (docs/operator-api.md, "Dashboard sessions"): a login exchanges the
 * operator token for a random session id carried in an `HttpOnly; SameSite=Strict` cookie, so the
 * token is never kept by the browser, put in a URL or logged. Sessions live in memory only: a
 * controller restart logs every browser out. A session expires after {@link SESSION_TTL_MS} without use.
 */
export class Sessions {
  readonly #sessions = new Map<string, number>();
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(options: { readonly now?: () => number; readonly ttlMs?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  }

  /** Opens a session; returns its id (64 hex). */
  open(): string {
    const id = randomBytes(32).toString('hex');
    this.#sessions.set(id, this.#now() + this.#ttlMs);
    while (this.#sessions.size > MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    return id;
  }

  /** Whether `id` is a live session (its expiry is pushed back when it is). */
  check(id: string | undefined): boolean {
    if (id === undefined) return false;
    const until = this.#sessions.get(id);
    if (until === undefined) return false;
    const now = this.#now();
    if (until <= now) {
      this.#sessions.delete(id);
      return false;
    }
    this.#sessions.delete(id);
    this.#sessions.set(id, now + this.#ttlMs);
    return true;
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
