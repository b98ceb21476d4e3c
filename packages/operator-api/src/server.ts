import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TransferProgress } from '@heddle/control-plane';
import { HeddleError } from '@heddle/envelope';
import { parseBody, readBody, validate } from './body.js';
import { NDJSON } from './constants.js';
import { ApiFailure, mapError } from './errors.js';
import type { OperatorHandlers } from './handlers.js';
import { matchRoute, OPERATOR_ROUTES, type RouteDef, type RouteName } from './routes.js';

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
    try {
      if (this.#closing !== undefined) res.setHeader('connection', 'close');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      path = url.pathname.slice(0, 256);
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
