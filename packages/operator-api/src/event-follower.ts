import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { ApiError } from './api-error.js';
import { EVENT_RETRY_MS, EVENT_STREAM } from './event-stream.js';
import { HttpFailure, pinnedSocket } from './http-request.js';
import { SseParser } from './sse-parser.js';

/** One event of the stream as a follower gets it (docs/operator-api.md, "Event stream"). */
export interface StreamEvent {
  /** The event id (`<epoch>-<seq>`). */
  readonly id: string;
  /** The event type (`instance.placed`, ..., or `stream.open` / `stream.reset`). */
  readonly type: string;
  /** The `data` field, parsed as JSON. */
  readonly data: unknown;
}

/** Options of {@link followEvents}. */
export interface FollowEventsOptions {
  /** `http://127.0.0.1:<port>`, or the `https://` address of a remote listener. */
  readonly url: string;
  /** The operator API token (a bearer token), when `authorization` is not given. */
  readonly token?: string;
  /**
   * The `Authorization` header of each connection (made again for each, so a signed request gets a
   * fresh time and nonce); default `Bearer <token>`.
   */
  readonly authorization?: (method: string, target: string) => string;
  /** For `https://`: the pinned SHA-256 fingerprint of the server's certificate (`sha256:<hex>`). */
  readonly fingerprint?: string | undefined;
  /** Told of each event, in order. */
  readonly onEvent: (event: StreamEvent) => void;
  /** Told when the connection drops and a reconnection is due in `delayMs`. */
  readonly onReconnect?: (reason: string, delayMs: number) => void;
  /** Resume after this event id (default: from now). */
  readonly lastEventId?: string | undefined;
  /** Ends the follow (the promise then resolves). */
  readonly signal?: AbortSignal | undefined;
  /** Longest wait before a reconnection (default 30 s; the delay doubles from the server's `retry`). */
  readonly maxRetryMs?: number;
  /**
   * A connection that sends nothing (not even a heartbeat) for this long is dropped and made again
   * (default 45 s: three of the server's 15 s heartbeats).
   */
  readonly idleTimeoutMs?: number;
}

/**
 * Follows `GET /v1/events` until `signal` aborts: parses the stream, tells `onEvent` of each event,
 * and when the connection drops reconnects with `Last-Event-ID` (backing off from the server's
 * `retry:` delay, doubling up to `maxRetryMs`, reset by each event). Rejects with `ApiError`
 * `unauthorized` (not retried) when the token is refused.
 */
export async function followEvents(options: FollowEventsOptions): Promise<void> {
  let lastId = options.lastEventId;
  let retry = EVENT_RETRY_MS;
  let failures = 0;
  const signal = options.signal;
  const aborted = (): boolean => signal?.aborted === true;
  const idleMs = options.idleTimeoutMs ?? 45_000;
  const url = `${options.url.replace(/\/+$/, '')}/v1/events`;
  const https = url.startsWith('https:');
  while (!aborted()) {
    const parser = new SseParser();
    // A pinned server's certificate is checked before anything is sent on the connection.
    let socket: TLSSocket | undefined;
    let connectFailure: string | undefined;
    if (https && options.fingerprint !== undefined) {
      try {
        socket = await pinnedSocket(new URL(url), options.fingerprint, 10_000);
      } catch (err) {
        if (err instanceof HttpFailure && err.code === 'fingerprint_mismatch') {
          throw new ApiError(
            'fingerprint_mismatch',
            `refusing ${options.url}: ${err.message} (nothing was sent)`,
          );
        }
        connectFailure = err instanceof Error ? err.message : String(err);
      }
    }
    const reason =
      connectFailure ??
      (await new Promise<string>((resolve, reject) => {
        let idle: NodeJS.Timeout | undefined;
        const headers: Record<string, string> = {
          authorization: options.authorization?.('GET', '/v1/events') ?? `Bearer ${options.token ?? ''}`,
          accept: EVENT_STREAM,
        };
        if (lastId !== undefined) headers['last-event-id'] = lastId;
        const base = { method: 'GET', headers };
        const req =
          socket !== undefined
            ? httpsRequest(url, { ...base, createConnection: () => socket })
            : https
              ? httpsRequest(url, base)
              : request(url, base);
        const onAbort = (): void => {
          req.destroy();
          resolve('aborted');
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const done = (why: string): void => {
          clearTimeout(idle);
          signal?.removeEventListener('abort', onAbort);
          resolve(why);
        };
        const quiet = (): void => {
          clearTimeout(idle);
          idle = setTimeout(() => {
            req.destroy();
            done(`nothing heard for ${idleMs} ms`);
          }, idleMs);
        };
        quiet();
        req.once('close', () => clearTimeout(idle));
        req.once('error', (err) => done(err.message));
        req.once('response', (res) => {
          if (res.statusCode === 401) {
            clearTimeout(idle);
            res.resume();
            signal?.removeEventListener('abort', onAbort);
            reject(new ApiError('unauthorized', 'the controller refused these credentials (401)'));
            return;
          }
          if (res.statusCode !== 200) {
            res.resume();
            done(`status ${res.statusCode}`);
            return;
          }
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            quiet();
            let messages: ReturnType<SseParser['feed']>;
            try {
              messages = parser.feed(chunk);
            } catch (err) {
              res.destroy();
              done(err instanceof Error ? err.message : String(err));
              return;
            }
            for (const m of messages) {
              if (m.lastEventId !== '') lastId = m.lastEventId;
              let data: unknown;
              try {
                data = JSON.parse(m.data);
              } catch {
                data = m.data;
              }
              failures = 0;
              options.onEvent({ id: m.lastEventId, type: m.type, data });
            }
            if (parser.retryMs !== undefined) retry = parser.retryMs;
          });
          res.once('end', () => done('the stream ended'));
          res.once('error', (err) => done(err.message));
        });
        req.end();
      }));
    if (reason === 'aborted' || aborted()) return;
    const delay = Math.min(retry * 2 ** failures, options.maxRetryMs ?? 30_000);
    failures += 1;
    options.onReconnect?.(reason, delay);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, delay);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true },
      );
    });
  }
}
