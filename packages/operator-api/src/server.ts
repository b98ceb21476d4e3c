import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PlaneEvents, TransferProgress } from '@heddle/control-plane';
import { HeddleError } from '@heddle/envelope';
import { parseBody, readBody, validate } from './body.js';
import { NDJSON } from './constants.js';
import { ApiFailure, mapError } from './errors.js';
import { DEFAULT_HEARTBEAT_MS, lastEventIdOf, serveEventStream } from './event-stream.js';
import type { OperatorHandlers } from './handlers.js';
import { matchRoute, OPERATOR_ROUTES, type RouteDef, type RouteName } from './routes.js';
import { CSRF_HEADER, Sessions, sessionOf } from './sessions.js';
import { type StaticUi, UI_PREFIX } from './static-ui.js';

/** Where the server writes its request log (a `Logger` of `@heddle/cli-kit` fits). */
export interface ApiLog {
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}

/** The log fields of an error: its code, field and message (and the stack of an unexpected one). */
function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof HeddleError) return { error_code: err.code, error_field: err.field, error: err.message };
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}

/** Options of {@link ApiServer.listen}. */
export interface ApiServerOptions {
  /** What each route does (see {@link OperatorHandlers}). */
  readonly handlers: OperatorHandlers;
  /** The bearer token every request must carry. */
  readonly token: string;
  /** Where each request is logged (one line per request; unexpected failures with their stack). */
  readonly log: ApiLog;
  /** The port on 127.0.0.1 (0: any free port). */
  readonly port: number;
  /** Least interval between two progress lines of one node in a place stream (default 100 ms). */
  readonly progressIntervalMs?: number;
  /** The plane's events, served as `GET /v1/events` (absent: that route answers `not_found`). */
  readonly events?: PlaneEvents;
  /** Interval between heartbeat comments of an event stream (default 15 s). */
  readonly heartbeatMs?: number;
  /** The dashboard's files, served under `/ui/` (absent: no dashboard). */
  readonly ui?: StaticUi;
  /** The dashboard's sessions (default: new ones, in memory). */
  readonly sessions?: Sessions;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * The operator API (docs/operator-api.md) on `127.0.0.1`: bearer token compared in constant time,
 * bodies of at most 64 KiB parsed strictly and validated with zod, errors mapped to statuses by code,
 * the NDJSON place stream. A failure while handling a request is answered (and logged), never thrown.
 */
export class ApiServer {
  readonly #server: Server;
  readonly #o: ApiServerOptions;
  readonly #token: Buffer;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #streams = new Set<() => void>();
  readonly #sessions: Sessions;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, options: ApiServerOptions) {
    this.#server = server;
    this.#o = options;
    this.#token = digest(options.token);
    this.#sessions = options.sessions ?? new Sessions();
  }

  /** Listens on `127.0.0.1:<port>`. */
  static listen(options: ApiServerOptions): Promise<ApiServer> {
    const server = createServer();
    const api = new ApiServer(server, options);
    server.on('request', (req, res) => api.#track(req, res));
    server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve(api);
      });
    });
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    // cast: a server listening on a TCP port (as listen() made it) has an AddressInfo address.
    const a = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${a.port}`;
  }

  /** Requests being handled. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Stops accepting connections, waits up to `graceMs` for the requests in flight, then closes every
   * connection. Idempotent.
   */
  close(graceMs: number): Promise<void> {
    this.#closing ??= (async () => {
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      for (const end of [...this.#streams]) end();
      this.#server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([Promise.allSettled([...this.#inFlight]), grace]);
      clearTimeout(timer);
      this.#server.closeAllConnections();
      await closed;
    })();
    return this.#closing;
  }

  #track(req: IncomingMessage, res: ServerResponse): void {
    const p = this.#handle(req, res).catch((err: unknown) => {
      this.#o.log.error('request handling failed', errorFields(err));
      if (!res.headersSent) this.#json(res, 500, { error: mapError(err).error });
      else res.destroy();
    });
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  #tokenMatches(token: string | undefined): boolean {
    return token !== undefined && timingSafeEqual(digest(token), this.#token);
  }

  /**
   * The bearer token, or a dashboard session cookie (for a request that changes something, only with
   * the `x-heddle-request: 1` header, which a cross-site form cannot send).
   */
  #authorised(req: IncomingMessage, method: string): boolean {
    const m = /^Bearer ([\x21-\x7e]{1,512})$/.exec(req.headers.authorization ?? '');
    if (m !== null) return this.#tokenMatches(m[1]);
    if (!this.#sessions.check(sessionOf(req))) return false;
    return method === 'GET' || req.headers[CSRF_HEADER] === '1';
  }

  /** `POST /v1/session` (log in with the token), `GET` (am I logged in), `DELETE` (log out). */
  async #session(req: IncomingMessage, res: ServerResponse, method: string): Promise<void> {
    if (method === 'GET') {
      req.resume();
      if (!this.#authorised(req, method)) throw new ApiFailure('unauthorized', 'not logged in');
      this.#json(res, 200, { authenticated: true });
      return;
    }
    if (method === 'DELETE') {
      req.resume();
      this.#sessions.close(sessionOf(req));
      res.setHeader('set-cookie', this.#sessions.cookie(''));
      this.#json(res, 200, { authenticated: false });
      return;
    }
    if (method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'GET, POST, DELETE');
      throw new ApiFailure('method_not_allowed', `${method} /v1/session: allowed GET, POST, DELETE`);
    }
    const body = parseBody(await readBody(req));
    const token =
      typeof body === 'object' && body !== null && 'token' in body && typeof body.token === 'string'
        ? body.token
        : undefined;
    if (token === undefined)
      throw new ApiFailure('invalid_input', 'body: {"token": "<the operator API token>"}', {
        field: 'token',
      });
    if (!this.#tokenMatches(token))
      throw new ApiFailure('unauthorized', 'wrong token (see <home>/api.token)');
    res.setHeader('set-cookie', this.#sessions.cookie(this.#sessions.open()));
    this.#json(res, 200, { authenticated: true });
  }

  /** `GET /v1/events`: the event stream, until the client leaves or the server closes. */
  #eventStream(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const events = this.#o.events;
    if (events === undefined) throw new ApiFailure('not_found', 'this server has no event stream');
    req.resume();
    return new Promise((resolve) => {
      const end = serveEventStream(
        res,
        events,
        lastEventIdOf(req, url),
        this.#o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
        () => {
          this.#streams.delete(end);
          resolve();
        },
      );
      this.#streams.add(end);
      if (this.#closing !== undefined) end();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const method = req.method ?? 'GET';
    let path = '?';
    let status = 200;
    let code: string | undefined;
    try {
      if (this.#closing !== undefined) res.setHeader('connection', 'close');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      path = url.pathname.slice(0, 256);
      const ui = this.#o.ui;
      if (ui !== undefined && (url.pathname === '/ui' || url.pathname.startsWith(UI_PREFIX))) {
        req.resume();
        if (method !== 'GET' && method !== 'HEAD')
          throw new ApiFailure('method_not_allowed', `${method} ${path}: allowed GET`);
        if (url.pathname === '/ui') {
          res.writeHead(308, { location: UI_PREFIX, 'content-length': 0 });
          res.end();
          status = 308;
          return;
        }
        if (!ui.serve(url.pathname, res)) throw new ApiFailure('not_found', `no file ${path}`);
        return;
      }
      if (url.pathname === '/v1/session') {
        await this.#session(req, res, method);
        return;
      }
      if (!this.#authorised(req, method)) {
        req.resume();
        throw new ApiFailure('unauthorized', 'missing or wrong bearer token (see <home>/api.token)');
      }
      if (url.pathname === '/v1/events' && method === 'GET') {
        await this.#eventStream(req, res, url);
        return;
      }
      const segments = url.pathname.split('/').slice(1).map(decode);
      const match = matchRoute(method, segments);
      if (match.name === undefined) {
        req.resume();
        if (match.methods.length > 0) {
          res.setHeader('allow', match.methods.join(', '));
          throw new ApiFailure(
            'method_not_allowed',
            `${method} ${path}: allowed ${match.methods.join(', ')}`,
          );
        }
        throw new ApiFailure('not_found', `no route ${method} ${path} (see the operator API's route table)`);
      }
      const { name, params } = match;
      const route: RouteDef<unknown, unknown, unknown> = OPERATOR_ROUTES[name];
      const rawQuery: Record<string, string> = {};
      for (const [k, v] of url.searchParams) if (!(k in rawQuery)) rawQuery[k] = v;
      let query: unknown;
      try {
        query = validate(route.query, rawQuery, 'query');
      } catch (err) {
        req.resume();
        throw err;
      }
      const bytes = await readBody(req);
      let body: unknown;
      if (route.body === null) {
        if (bytes.length > 0)
          throw new ApiFailure('invalid_input', `${method} takes no body`, { field: '$' });
      } else {
        const what = name === 'place' ? 'order' : name === 'pushRevocations' ? 'list' : 'body';
        body = validate(route.body, parseBody(bytes), what);
      }
      const call = (onProgress?: (p: TransferProgress) => void): Promise<unknown> =>
        dispatch(this.#o.handlers, name, {
          id: params.id ?? '',
          body,
          query,
          ...(onProgress === undefined ? {} : { onProgress }),
        });
      const streaming = route.streams && (req.headers.accept ?? '').includes(NDJSON);
      if (!streaming) {
        this.#json(res, 200, await call());
        return;
      }
      res.writeHead(200, { 'content-type': NDJSON, 'cache-control': 'no-store' });
      res.flushHeaders();
      try {
        const result = await call(this.#progress(res));
        line(res, { event: 'result', result });
      } catch (err) {
        const m = mapError(err);
        status = m.status;
        code = m.error.code;
        if (m.unexpected)
          this.#o.log.error('request failed unexpectedly', { method, path, ...errorFields(err) });
        line(res, { event: 'error', error: m.error });
      }
      res.end();
    } catch (err) {
      const m = mapError(err);
      status = m.status;
      code = m.error.code;
      if (m.unexpected)
        this.#o.log.error('request failed unexpectedly', { method, path, ...errorFields(err) });
      if (res.headersSent) res.destroy();
      else this.#json(res, m.status, { error: m.error });
    } finally {
      this.#o.log.info('request', { method, path, status, code, ms: Date.now() - started });
    }
  }

  #progress(res: ServerResponse): (p: TransferProgress) => void {
    const interval = this.#o.progressIntervalMs ?? 100;
    const last = new Map<string, number>();
    return (p) => {
      const now = Date.now();
      if (p.bytes < p.total && now - (last.get(p.node_id) ?? 0) < interval) return;
      last.set(p.node_id, now);
      line(res, { event: 'progress', node_id: p.node_id, bytes: p.bytes, total: p.total });
    };
  }

  #json(res: ServerResponse, status: number, value: unknown): void {
    const text = JSON.stringify(value);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
    });
    res.end(text);
  }
}

/**
 * Calls the handler of `name`. The body and query were parsed with that route's schemas, so they are
 * the handler's types.
 */
function dispatch(
  handlers: OperatorHandlers,
  name: RouteName,
  req: { id: string; body: unknown; query: unknown; onProgress?: (p: TransferProgress) => void },
): Promise<unknown> {
  // cast: `body` and `query` were validated with OPERATOR_ROUTES[name]'s schemas just before, which
  // are exactly the types handlers[name] takes; TypeScript cannot correlate the two through `name`.
  const handler = handlers[name] as (r: typeof req) => unknown;
  return Promise.resolve(handler(req));
}

function line(res: ServerResponse, value: unknown): void {
  if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify(value)}\n`);
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '\u0000';
  }
}
