import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { PlaneEvents, TransferProgress } from '@heddle/control-plane';
import { type Actor, runAsActor } from '@heddle/control-plane/contract';
import { HeddleError } from '@heddle/envelope';
import { Authenticator, requireRole } from './authenticator.js';
import { parseBody, readBody, validate } from './body.js';
import { NDJSON, REQUEST_ID_HEADER, REQUEST_ID_PATTERN } from './constants.js';
import { ApiFailure, mapError } from './errors.js';
import { DEFAULT_HEARTBEAT_MS, lastEventIdOf, serveEventStream } from './event-stream.js';
import type { OperatorHandlers } from './handlers.js';
import { matchRoute, OPERATOR_ROUTES, type RouteDef, type RouteName } from './routes.js';
import { CSRF_HEADER, Sessions, sessionOf } from './sessions.js';
import { type StaticUi, UI_PREFIX } from './static-ui.js';
import { certFingerprint, type TlsMaterial } from './tls-cert.js';

/** Where the server writes its request log (a `Logger` of `@heddle/cli-kit` fits). */
export interface ApiLog {
  /** Where the requests of health probes go (`/healthz`, `/readyz`); not logged without it. */
  debug?(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}

/** The log fields of an error: its code, field and message (and the stack of an unexpected one). */
function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof HeddleError) return { error_code: err.code, error_field: err.field, error: err.message };
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}

/** What the server tells `onRequest` of each request it answered (for metrics). */
export interface ApiRequestEvent {
  /** The route matched, or null (unauthorised, unknown path, health endpoints). */
  readonly route: RouteName | null;
  readonly method: string;
  /** The HTTP status (200 for a streamed place whose stream ended in an error line: see `code`). */
  readonly status: number;
  /** The error code answered, or null. */
  readonly code: string | null;
  readonly ms: number;
  /** Bytes of the request body read and of the answer written (headers not counted). */
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly requestId: string;
}

/** Options of {@link ApiServer.listen}. */
export interface ApiServerOptions {
  /** What each route does (see {@link OperatorHandlers}). */
  readonly handlers: OperatorHandlers;
  /**
   * Who may call: an {@link Authenticator} (shared by every listener of a controller, so a nonce spent
   * on one cannot be replayed on another), or just the admin bearer token (`api.token`).
   */
  readonly auth: Authenticator | { readonly token: string };
  /** Where each request is logged (one line per request; unexpected failures with their stack). */
  readonly log: ApiLog;
  /** The port (0: any free port). */
  readonly port: number;
  /** The address to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** Serve HTTPS with this certificate and key (PEM) instead of plain HTTP. */
  readonly tls?: TlsMaterial;
  /** Least interval between two progress lines of one node in a place stream (default 100 ms). */
  readonly progressIntervalMs?: number;
  /**
   * The readiness checks of `GET /readyz` (served, like `GET /healthz`, without the token: only
   * these names and booleans). Default: `{ accepting: true }` until the server closes.
   */
  readonly ready?: () => Readonly<Record<string, boolean>>;
  /** Told of every request once answered (a throw is ignored). */
  readonly onRequest?: (e: ApiRequestEvent) => void;
  /** The plane's events, served as `GET /v1/events` (absent: that route answers `not_found`). */
  readonly events?: PlaneEvents;
  /** Interval between heartbeat comments of an event stream (default 15 s). */
  readonly heartbeatMs?: number;
  /** The dashboard's files, served under `/ui/` (absent: no dashboard). */
  readonly ui?: StaticUi;
  /** The dashboard's sessions (default: new ones, in memory). */
  readonly sessions?: Sessions;
}

/**
 * The operator API (docs/operator-api.md), plain HTTP on `127.0.0.1` or HTTPS on any address: each
 * request authenticated (bearer token compared in constant time, or an operator's signed request)
 * before anything else, then held to its route's role; bodies of at most 64 KiB parsed strictly and
 * validated with zod, errors mapped to statuses by code, the NDJSON place stream. A failure while
 * handling a request is answered (and logged), never thrown. The handler runs as the request's actor
 * (`runAsActor`), so the decisions it chains name who asked.
 */
export class ApiServer {
  readonly #server: Server;
  readonly #o: ApiServerOptions;
  readonly #auth: Authenticator;
  readonly #fingerprint: string | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #streams = new Set<() => void>();
  readonly #sessions: Sessions;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, options: ApiServerOptions) {
    this.#server = server;
    this.#o = options;
    this.#auth =
      options.auth instanceof Authenticator
        ? options.auth
        : new Authenticator({ adminToken: options.auth.token });
    this.#fingerprint = options.tls === undefined ? undefined : certFingerprint(options.tls.cert);
    this.#sessions = options.sessions ?? new Sessions();
  }

  /** Listens on `<host>:<port>` (HTTPS with `tls`). */
  static listen(options: ApiServerOptions): Promise<ApiServer> {
    const server: Server =
      options.tls === undefined
        ? createServer()
        : createTlsServer({ cert: options.tls.cert, key: options.tls.key });
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
      server.listen(options.port, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve(api);
      });
    });
  }

  /** `http://127.0.0.1:<port>`, or `https://<host>:<port>` with TLS. */
  get url(): string {
    // cast: a server listening on a TCP port (as listen() made it) has an AddressInfo address.
    const a = this.#server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `${this.#o.tls === undefined ? 'http' : 'https'}://${host}:${a.port}`;
  }

  /** The SHA-256 fingerprint (`sha256:<hex>`) of the TLS certificate, which clients pin; undefined without TLS. */
  get fingerprint(): string | undefined {
    return this.#fingerprint;
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

  /**
   * Who a request is from: its `Authorization` header (a bearer token or a signed request), or else a
   * dashboard session cookie. A session keeps the token it was opened with (in memory, never sent
   * back), and each request is decided again with it, so a removed operator or a rotated token ends
   * its sessions at once. With a cookie, a request that changes something must also carry
   * `x-heddle-request: 1`, which a cross-site form cannot send.
   */
  #begin(req: IncomingMessage, method: string, target: string): ReturnType<Authenticator['begin']> {
    if (req.headers.authorization !== undefined)
      return this.#auth.begin(req.headers.authorization, method, target);
    const token = this.#sessions.token(sessionOf(req));
    if (token === undefined) return this.#auth.begin(undefined, method, target);
    if (method !== 'GET' && method !== 'HEAD' && req.headers[CSRF_HEADER] !== '1') {
      throw new ApiFailure(
        'unauthorized',
        `a request that changes something with a session cookie must carry the ${CSRF_HEADER}: 1 header`,
        { field: CSRF_HEADER },
      );
    }
    return this.#auth.begin(`Bearer ${token}`, method, target);
  }

  /** `POST /v1/session` (log in with a token), `GET` (who am I logged in as), `DELETE` (log out). */
  async #session(req: IncomingMessage, res: ServerResponse, method: string, target: string): Promise<string> {
    if (method === 'GET') {
      req.resume();
      if (this.#sessions.token(sessionOf(req)) === undefined)
        throw new ApiFailure('unauthorized', 'not logged in');
      const actor = this.#begin(req, method, target).finish(new Uint8Array());
      this.#json(res, 200, { authenticated: true, name: actor.name, role: actor.role });
      return actor.name;
    }
    if (method === 'DELETE') {
      req.resume();
      this.#sessions.close(sessionOf(req));
      res.setHeader('set-cookie', this.#sessions.cookie(''));
      this.#json(res, 200, { authenticated: false });
      return '';
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
    if (token === undefined || !/^[\x21-\x7e]{1,512}$/.test(token))
      throw new ApiFailure('invalid_input', 'body: {"token": "<api.token or an operator token>"}', {
        field: 'token',
      });
    // The token is decided as a bearer token would be (unknown_token otherwise).
    const actor = this.#auth.begin(`Bearer ${token}`, 'POST', target).finish(new Uint8Array());
    // Over HTTPS the cookie is also `Secure`: never sent back over plain HTTP.
    const cookie = this.#sessions.cookie(this.#sessions.open(token));
    res.setHeader('set-cookie', this.#o.tls === undefined ? cookie : `${cookie}; Secure`);
    this.#json(res, 200, { authenticated: true, name: actor.name, role: actor.role });
    return actor.name;
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
    let routeName: RouteName | null = null;
    let bytesIn = 0;
    let probe = false;
    let operator: string | undefined;
    const given = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    try {
      res.setHeader(REQUEST_ID_HEADER, requestId);
      if (this.#closing !== undefined) res.setHeader('connection', 'close');
      const target = req.url ?? '/';
      const url = new URL(target, 'http://127.0.0.1');
      path = url.pathname.slice(0, 256);
      if ((path === '/healthz' || path === '/readyz') && (method === 'GET' || method === 'HEAD')) {
        probe = true;
        req.resume();
        status = this.#health(res, path, method);
        return;
      }
      if (given !== undefined && requestId !== given) {
        req.resume();
        throw new ApiFailure(
          'invalid_input',
          `${REQUEST_ID_HEADER}: expected 1 to 128 characters of [A-Za-z0-9._:-], starting with a letter or digit`,
          { field: REQUEST_ID_HEADER },
        );
      }
      const ui = this.#o.ui;
      if (ui !== undefined && (url.pathname === '/ui' || url.pathname.startsWith(UI_PREFIX))) {
        // The dashboard's files are public (its login form among them); its data needs credentials.
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
        operator = await this.#session(req, res, method, target);
        return;
      }
      let pending: ReturnType<Authenticator['begin']>;
      try {
        pending = this.#begin(req, method, target);
      } catch (err) {
        req.resume();
        throw err;
      }
      // The body is part of what a signature covers: read it (at most 64 KiB) before anything else.
      const bytes = await readBody(req);
      bytesIn = bytes.length;
      const actor: Actor = pending.finish(bytes);
      operator = actor.name;
      if (url.pathname === '/v1/events' && method === 'GET') {
        requireRole(actor, 'viewer', `${method} ${path}`);
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
      routeName = name;
      const route: RouteDef<unknown, unknown, unknown> = OPERATOR_ROUTES[name];
      requireRole(actor, route.role, `${method} ${path}`);
      const rawQuery: Record<string, string> = {};
      for (const [k, v] of url.searchParams) if (!(k in rawQuery)) rawQuery[k] = v;
      const query = validate(route.query, rawQuery, 'query');
      let body: unknown;
      if (route.body === null) {
        if (bytes.length > 0)
          throw new ApiFailure('invalid_input', `${method} takes no body`, { field: '$' });
      } else {
        const what = name === 'place' ? 'order' : name === 'pushRevocations' ? 'list' : 'body';
        body = validate(route.body, parseBody(bytes), what);
      }
      const call = (onProgress?: (p: TransferProgress) => void): Promise<unknown> =>
        runAsActor(actor, () =>
          dispatch(this.#o.handlers, name, {
            id: params.id ?? '',
            body,
            query,
            actor,
            requestId,
            ...(onProgress === undefined ? {} : { onProgress }),
          }),
        );
      const streaming = route.streams && (req.headers.accept ?? '').includes(NDJSON);
      if (!streaming) {
        this.#json(res, 200, await call());
        return;
      }
      res.writeHead(200, { 'content-type': NDJSON, 'cache-control': 'no-store' });
      res.flushHeaders();
      try {
        const result = await call(this.#progress(res));
        this.#line(res, { event: 'result', result });
      } catch (err) {
        const m = mapError(err);
        status = m.status;
        code = m.error.code;
        if (m.unexpected)
          this.#o.log.error('request failed unexpectedly', { method, path, ...errorFields(err) });
        this.#line(res, { event: 'error', error: m.error });
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
      const ms = Date.now() - started;
      const fields = { method, path, status, code, operator, ms, request_id: requestId };
      // A probe polls the health routes every few seconds: their lines go to debug.
      if (probe) this.#o.log.debug?.('request', fields);
      else this.#o.log.info('request', fields);
      this.#tell({
        route: routeName,
        method,
        status,
        code: code ?? null,
        ms,
        bytesIn,
        bytesOut: this.#bytesOut.get(res) ?? 0,
        requestId,
      });
    }
  }

  readonly #bytesOut = new WeakMap<ServerResponse, number>();

  #line(res: ServerResponse, value: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    const text = `${JSON.stringify(value)}\n`;
    this.#bytesOut.set(res, (this.#bytesOut.get(res) ?? 0) + Buffer.byteLength(text));
    res.write(text);
  }

  #tell(e: ApiRequestEvent): void {
    try {
      this.#o.onRequest?.(e);
    } catch {
      // An observer's failure changes nothing of the answer.
    }
  }

  /** Answers `GET /healthz` or `/readyz` (no token needed: only fixed names and booleans); returns the status. */
  #health(res: ServerResponse, path: string, method: string): number {
    let checks: Readonly<Record<string, boolean>>;
    if (path === '/healthz') checks = {};
    else {
      try {
        checks = this.#o.ready?.() ?? { accepting: true };
      } catch {
        checks = { ready_check: false };
      }
      if (this.#closing !== undefined) checks = { ...checks, accepting: false };
    }
    const ok = Object.values(checks).every((v) => v === true);
    const body = path === '/healthz' ? { status: 'ok' } : { status: ok ? 'ready' : 'not_ready', checks };
    const status = ok ? 200 : 503;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
    });
    res.end(method === 'HEAD' ? undefined : text);
    return status;
  }

  #progress(res: ServerResponse): (p: TransferProgress) => void {
    const interval = this.#o.progressIntervalMs ?? 100;
    const last = new Map<string, number>();
    return (p) => {
      const now = Date.now();
      if (p.bytes < p.total && now - (last.get(p.node_id) ?? 0) < interval) return;
      last.set(p.node_id, now);
      this.#line(res, { event: 'progress', node_id: p.node_id, bytes: p.bytes, total: p.total });
    };
  }

  #json(res: ServerResponse, status: number, value: unknown): void {
    const text = JSON.stringify(value);
    this.#bytesOut.set(res, (this.#bytesOut.get(res) ?? 0) + Buffer.byteLength(text));
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
  req: {
    id: string;
    body: unknown;
    query: unknown;
    requestId: string;
    actor: Actor;
    onProgress?: (p: TransferProgress) => void;
  },
): Promise<unknown> {
  // cast: `body` and `query` were validated with OPERATOR_ROUTES[name]'s schemas just before, which
  // are exactly the types handlers[name] takes; TypeScript cannot correlate the two through `name`.
  const handler = handlers[name] as (r: typeof req) => unknown;
  return Promise.resolve(handler(req));
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '\u0000';
  }
}
