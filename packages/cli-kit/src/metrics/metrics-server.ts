import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EXPOSITION_CONTENT_TYPE } from './exposition.js';
import { healthAnswer, type ReadinessChecks } from './health.js';
import type { MetricsRegistry } from './registry.js';

/** Options of {@link MetricsServer.listen}. */
export interface MetricsServerOptions {
  /** The registry served at `/metrics`. */
  readonly registry: MetricsRegistry;
  /** The readiness checks served at `/readyz`. */
  readonly ready: () => ReadinessChecks;
  /** The address to listen on (`127.0.0.1` by default in every daemon's config). */
  readonly host: string;
  /** The port (0: any free port). */
  readonly port: number;
}

/**
 * The unauthenticated observability listener of a daemon: `GET /metrics` (text exposition),
 * `GET /healthz` and `GET /readyz` (JSON, see `healthAnswer`); `HEAD` is answered like `GET`
 * without a body. Any other path is 404, any other method 405; a request body is never read.
 */
export class MetricsServer {
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Listens on `host:port`; rejects when the address cannot be listened on. */
  static listen(options: MetricsServerOptions): Promise<MetricsServer> {
    const server = createServer((req, res) => answer(options, req, res));
    server.headersTimeout = 10_000;
    server.requestTimeout = 10_000;
    server.on('clientError', (_err, socket) => socket.destroy());
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve(new MetricsServer(server));
      });
    });
  }

  /** `http://<host>:<port>` (an IPv6 host in brackets). */
  get url(): string {
    // cast: a server listening on a TCP port (as listen() made it) has an AddressInfo address.
    const a = this.#server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}`;
  }

  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.#server.listening) {
        resolve();
        return;
      }
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}

function answer(o: MetricsServerOptions, req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const method = req.method ?? 'GET';
  const send = (status: number, type: string, text: string): void => {
    res.writeHead(status, {
      'content-type': type,
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
    });
    res.end(method === 'HEAD' ? undefined : text);
  };
  const known = path === '/metrics' || path === '/healthz' || path === '/readyz';
  if (!known) {
    send(404, 'text/plain; charset=utf-8', 'not found: /metrics, /healthz, /readyz\n');
    return;
  }
  if (method !== 'GET' && method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(405, 'text/plain; charset=utf-8', 'method not allowed\n');
    return;
  }
  if (path === '/metrics') {
    let text: string;
    try {
      text = o.registry.render();
    } catch (err) {
      send(500, 'text/plain; charset=utf-8', `metrics failed: ${String(err)}\n`);
      return;
    }
    send(200, EXPOSITION_CONTENT_TYPE, text);
    return;
  }
  const h = healthAnswer(path, o.ready);
  if (h !== undefined) send(h.status, 'application/json', JSON.stringify(h.body));
}
