import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { Admission, peerOf } from './admission.js';
import { CloseCode } from './close-codes.js';
import { WireError } from './errors.js';
import {
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CALLS_PER_SESSION,
  DEFAULT_MAX_PEER_CONNECTIONS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_PING_INTERVAL_MS,
  MAX_BINARY_FRAME_BYTES,
} from './limits.js';
import { sendJson } from './send.js';
import { type CallHandler, ServerSession } from './server-session.js';

/** An operator-supplied TLS certificate and key (PEM), for `wss://`. */
export interface WireTlsOptions {
  /** Certificate chain, PEM. */
  readonly cert: string | Buffer;
  /** Private key, PEM. */
  readonly key: string | Buffer;
}

/** Options of {@link WireServer.listen}. */
export interface WireServerOptions {
  /** Answers each call with the host's signed response. */
  readonly handler: CallHandler;
  /** Address to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** Port (default 0: any free port). */
  readonly port?: number;
  /** Serve `wss://` with this certificate (default plain `ws://`). */
  readonly tls?: WireTlsOptions;
  /** Most sessions at once; more are closed with 1013 (default 256). */
  readonly maxSessions?: number;
  /** Most calls open at once in one session; more close it with 4003 (default 8). */
  readonly maxCallsPerSession?: number;
  /**
   * Most unauthenticated connections (before their first verified call) one remote address holds at
   * once; one more closes that address's oldest (default 128). See docs/protocol.md section 13.3.
   */
  readonly maxConnectionsPerPeer?: number;
  /**
   * Time from TCP accept to a completed upgrade before the socket is destroyed, and again from the
   * upgrade to the first verified call before the session is closed with 4002 (default 10 s each).
   */
  readonly handshakeTimeoutMs?: number;
  /** Time without a complete frame and without an open call before a session is closed with 4002 (default 30 s). */
  readonly idleTimeoutMs?: number;
  /** Ping interval; a peer that missed the previous ping is terminated (default 15 s). */
  readonly pingIntervalMs?: number;
  /** Told of handler failures and other unexpected errors (default: ignored). */
  readonly onError?: (err: unknown) => void;
}

/**
 * The host side of the transport: a WebSocket server on `host:port` that answers signed calls with
 * `handler` and, within a call, fetches the controller's package (`ctx.fetchPackage`). It never throws
 * on peer input: malformed frames get an `error` frame and the connection is closed.
 */
export class WireServer {
  readonly #http: Server;
  readonly #wss: WebSocketServer;
  readonly #sessions = new Set<ServerSession>();
  readonly #sockets = new Set<Socket>();
  readonly #closedBytes = { read: 0, written: 0 };
  readonly #deadlines = new WeakMap<Socket, NodeJS.Timeout>();
  readonly #admission: Admission;
  readonly #sessionOf = new WeakMap<object, ServerSession>();
  readonly #ping: NodeJS.Timeout;
  readonly #secure: boolean;
  #closing = false;
  #accepting = true;
  #listenerClosed: Promise<void> | undefined;
  #bound: AddressInfo | undefined;

  private constructor(options: WireServerOptions) {
    const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    const handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    const onError = options.onError ?? (() => {});
    const settings = {
      handler: options.handler,
      maxCallsPerSession: options.maxCallsPerSession ?? DEFAULT_MAX_CALLS_PER_SESSION,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      onError,
    };
    this.#secure = options.tls !== undefined;
    this.#http =
      options.tls === undefined
        ? createHttpServer()
        : createHttpsServer({
            cert: options.tls.cert,
            key: options.tls.key,
            handshakeTimeout: handshakeTimeoutMs,
          });
    this.#http.headersTimeout = handshakeTimeoutMs;
    this.#http.requestTimeout = handshakeTimeoutMs;
    // No maxConnections: node would drop the newest connection, a controller's included. Admission
    // bounds unauthenticated connections instead (per peer, and overall by closing the oldest of the
    // heaviest peer); authenticated sessions are bounded by maxSessions.
    this.#admission = new Admission({
      maxUnauthenticated: maxSessions + 64,
      maxPerPeer: options.maxConnectionsPerPeer ?? DEFAULT_MAX_PEER_CONNECTIONS,
    });
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_BINARY_FRAME_BYTES,
      perMessageDeflate: false,
      clientTracking: false,
    });
    // A connection must complete its upgrade within handshakeTimeoutMs (an absolute deadline, so a
    // client dripping header bytes cannot keep it alive: slowloris).
    const deadline = (socket: Socket): void => {
      const timer = setTimeout(() => socket.destroy(), handshakeTimeoutMs);
      timer.unref();
      this.#deadlines.set(socket, timer);
      socket.on('close', () => clearTimeout(timer));
    };
    this.#http.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('error', () => {});
      this.#admission.admit(socket, peerOf(socket), () => socket.destroy());
      socket.on('close', () => {
        this.#closedBytes.read += socket.bytesRead;
        this.#closedBytes.written += socket.bytesWritten;
        this.#sockets.delete(socket);
        this.#admission.release(socket);
      });
      if (!this.#secure) deadline(socket);
    });
    this.#http.on('secureConnection', (socket: Socket) => {
      socket.on('error', () => {});
      deadline(socket);
    });
    this.#http.on('tlsClientError', (_err: Error, socket: Duplex) => socket.destroy());
    this.#http.on('clientError', (_err: Error, socket: Duplex) => socket.destroy());
    this.#http.on('request', (_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', connection: 'close' });
      res.end('WebSocket upgrade required\n');
    });
    this.#http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => {});
      if (this.#closing || !this.#accepting) {
        socket.destroy();
        return;
      }
      // The TCP socket under a TLS one (admission counts TCP sockets).
      // cast: ws gives a TLS socket's TCP socket as the undocumented _parent; the upgrade socket is a net.Socket
      const raw = ((socket as { _parent?: Socket })._parent ?? socket) as Socket;
      this.#wss.handleUpgrade(req, socket, head, (ws) => {
        // cast: the upgrade socket of a node:http server is a net.Socket
        clearTimeout(this.#deadlines.get(socket as Socket));
        ws.on('error', () => {});
        if (this.#sessions.size >= maxSessions) {
          // Full: make room by closing an unauthenticated session; refuse only when all are authenticated.
          const evicted = this.#admission.evictSession((key) => this.#sessionOf.has(key));
          if (!evicted) {
            sendJson(ws, { t: 'error', code: 'session_limit', reason: `more than ${maxSessions} sessions` });
            ws.close(CloseCode.tryAgainLater, 'session_limit');
            return;
          }
        }
        const authTimer = setTimeout(
          () => session.close(CloseCode.idle, 'no verified call'),
          handshakeTimeoutMs,
        );
        authTimer.unref();
        const session: ServerSession = new ServerSession(
          ws,
          req.socket.remoteAddress,
          {
            ...settings,
            onAuthenticated: () => {
              clearTimeout(authTimer);
              this.#admission.release(raw);
            },
          },
          () => {
            clearTimeout(authTimer);
            this.#sessions.delete(session);
            this.#admission.release(raw);
          },
        );
        this.#sessions.add(session);
        this.#sessionOf.set(raw, session);
        this.#admission.setEvict(raw, () => {
          this.#sessions.delete(session);
          session.close(CloseCode.idle, 'evicted: unauthenticated');
          raw.destroy();
        });
      });
    });
    this.#ping = setInterval(() => {
      for (const s of this.#sessions) s.ping();
    }, options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS);
    this.#ping.unref();
  }

  /** Starts a server and resolves once it listens. */
  static async listen(options: WireServerOptions): Promise<WireServer> {
    const server = new WireServer(options);
    await new Promise<void>((resolve, reject) => {
      server.#http.once('error', reject);
      server.#http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.#http.off('error', reject);
        server.#bound = addressInfo(server.#http.address());
        resolve();
      });
    });
    return server;
  }

  /** The address and port listened on. */
  get address(): { readonly host: string; readonly port: number } {
    const a = this.#bound ?? addressInfo(this.#http.address());
    if (a === undefined) throw new WireError('closed', 'the server is not listening');
    return { host: a.address, port: a.port };
  }

  /** The URL clients connect to (`ws://host:port/` or `wss://host:port/`). */
  get url(): string {
    const { host, port } = this.address;
    const h = host.includes(':') ? `[${host}]` : host;
    return `${this.#secure ? 'wss' : 'ws'}://${h}:${port}/`;
  }

  /** Number of open sessions. */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /**
   * Bytes read from and written to every TCP connection this server accepted, closed or open (TLS
   * and WebSocket framing included): what went over the network.
   */
  get bytes(): { readonly read: number; readonly written: number } {
    let read = this.#closedBytes.read;
    let written = this.#closedBytes.written;
    for (const s of this.#sockets) {
      read += s.bytesRead;
      written += s.bytesWritten;
    }
    return { read, written };
  }

  /** Number of connections (raw or upgraded) that have not yet made a verified call. */
  get unauthenticatedCount(): number {
    return this.#admission.size;
  }

  /**
   * Stops accepting connections (the listening socket is closed; an upgrade already under way is
   * refused) while open sessions carry on, so that their calls can finish: the first step of a
   * graceful shutdown. Then {@link close}.
   */
  stopAccepting(): void {
    if (!this.#accepting) return;
    this.#accepting = false;
    this.#listenerClosed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  /** True until {@link stopAccepting} or {@link close}. */
  get accepting(): boolean {
    return this.#accepting && !this.#closing;
  }

  /** Stops accepting, closes every session with 1001 and every other socket, and resolves when done. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    clearInterval(this.#ping);
    for (const s of this.#sessions) s.close(CloseCode.goingAway, 'server closing');
    this.stopAccepting();
    const done = this.#listenerClosed ?? Promise.resolve();
    this.#http.closeAllConnections();
    setTimeout(() => {
      for (const socket of this.#sockets) socket.destroy();
    }, 200).unref();
    for (const socket of this.#sockets) socket.end();
    await done;
  }
}

/** A TCP server's address (`server.address()`), or undefined when it is not listening on TCP. */
function addressInfo(a: AddressInfo | string | null): AddressInfo | undefined {
  return a === null || typeof a === 'string' ? undefined : a;
}
