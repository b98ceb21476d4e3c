import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TransferProgress } from '@heddle/control-plane';
import { HeddleError } from '@heddle/envelope';
import { parseBody, readBody, validate } from './body.js';
import { NDJSON, REQUEST_ID_HEADER, REQUEST_ID_PATTERN } from './constants.js';
import { ApiFailure, mapError } from './errors.js';
import type { OperatorHandlers } from './handlers.js';
import { matchRoute, OPERATOR_ROUTES, type RouteDef, type RouteName } from './routes.js';

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
  /** The bearer token every request must carry. */
  readonly token: string;
  /** Where each request is logged (one line per request; unexpected failures with their stack). */
  readonly log: ApiLog;
  /** The port on 127.0.0.1 (0: any free port). */
  readonly port: number;
  /** Least interval between two progress lines of one node in a place stream (default 100 ms). */
  readonly progressIntervalMs?: number;
  /**
   * The readiness checks of `GET /readyz` (served, like `GET /healthz`, without the token: only
   * these names and booleans). Default: `{ accepting: true }` until the server closes.
   */
  readonly ready?: () => Readonly<Record<string, boolean>>;
  /** Told of every request once answered (a throw is ignored). */
  readonly onRequest?: (e: ApiRequestEvent) => void;
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
  #closing: Promise<void> | undefined;

  private constructor(server: Server, options: ApiServerOptions) {
    this.#server = server;
    this.#o = options;
    this.#token = digest(options.token);
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

  #authorised(req: IncomingMessage): boolean {
    const m = /^Bearer ([\x21-\x7e]{1,512})$/.exec(req.headers.authorization ?? '');
    return m?.[1] !== undefined && timingSafeEqual(digest(m[1]), this.#token);
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
    const given = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    try {
      res.setHeader(REQUEST_ID_HEADER, requestId);
      if (this.#closing !== undefined) res.setHeader('connection', 'close');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
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
      if (!this.#authorised(req)) {
        req.resume();
        throw new ApiFailure('unauthorized', 'missing or wrong bearer token (see <home>/api.token)');
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
      bytesIn = bytes.length;
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
          requestId,
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
      const fields = { method, path, status, code, ms, request_id: requestId };
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
