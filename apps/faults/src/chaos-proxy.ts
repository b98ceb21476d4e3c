import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/**
 * What the proxy does to traffic, switchable at any time:
 * - `pass`: forwards both ways (optionally throttled to `bytesPerSec`).
 * - `delay`: forwards both ways, every chunk `ms` later (order kept; optionally throttled).
 * - `drop`: once the client has sent its request (the first client bytes after the server first spoke,
 *   i.e. after a handshake), keeps forwarding client to server but swallows everything the server
 *   sends, and cuts the connection `cutAfterMs` later: the server may act, its answer never arrives.
 * - `cut`: closes both sides `afterMs` after the client sent its request (the answer may or may not
 *   have made it back first).
 * - `partition`: kills every open connection, and refuses (`refuse`: reset at once) or blackholes
 *   (`blackhole`: accepts and forwards nothing) new ones until the mode changes.
 */
export type ProxyMode =
  | { readonly kind: 'pass'; readonly bytesPerSec?: number }
  | { readonly kind: 'delay'; readonly ms: number; readonly bytesPerSec?: number }
  | { readonly kind: 'drop'; readonly cutAfterMs: number }
  | { readonly kind: 'cut'; readonly afterMs: number }
  | { readonly kind: 'partition'; readonly style: 'refuse' | 'blackhole' };

/** Counters of what the proxy did (for assertions and trial reports). */
export interface ProxyStats {
  /** Connections accepted and forwarded. */
  accepted: number;
  /** Connections refused or blackholed while partitioned. */
  refused: number;
  /** Connections closed by the proxy (cut, drop, partition). */
  cut: number;
  /** Server-to-client bytes swallowed by `drop`. */
  swallowed: number;
  /** Requests seen (first client bytes after the server spoke). */
  requests: number;
}

interface Conn {
  readonly client: Socket;
  readonly server: Socket | undefined;
  serverSpoke: boolean;
  requestSeen: boolean;
  swallow: boolean;
  /** When the last scheduled chunk of each direction is written (ordering under delay/throttle). */
  lastAt: { c2s: number; s2c: number };
  timers: Set<NodeJS.Timeout>;
}

/**
 * A real TCP proxy on 127.0.0.1 in front of one target port (a host daemon): the controller is given
 * the proxy's `ws://` URL as the node's address, so every call to that node goes through it. The
 * target port can be changed ({@link ChaosProxy.retarget}) when the daemon behind it moves.
 */
export class ChaosProxy {
  readonly #server: Server;
  readonly #conns = new Set<Conn>();
  #targetPort: number;
  #mode: ProxyMode = { kind: 'pass' };
  /** What the proxy did so far. */
  readonly stats: ProxyStats = { accepted: 0, refused: 0, cut: 0, swallowed: 0, requests: 0 };

  private constructor(server: Server, targetPort: number) {
    this.#server = server;
    this.#targetPort = targetPort;
  }

  /** Starts a proxy on 127.0.0.1 (a free port) forwarding to 127.0.0.1:`targetPort`. */
  static async start(targetPort: number): Promise<ChaosProxy> {
    const server = createServer();
    const proxy = new ChaosProxy(server, targetPort);
    server.on('connection', (s) => proxy.#accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** The port the proxy listens on. */
  get port(): number {
    const a = this.#server.address();
    return typeof a === 'object' && a !== null ? a.port : 0;
  }

  /** `ws://127.0.0.1:<port>/`: the node address to give the controller. */
  get url(): string {
    return `ws://127.0.0.1:${this.port}/`;
  }

  /** The mode in force. */
  get mode(): ProxyMode {
    return this.#mode;
  }

  /** Connections open now. */
  get open(): number {
    return this.#conns.size;
  }

  /** Switches the mode; `partition` also kills every open connection at once. */
  set(mode: ProxyMode): void {
    this.#mode = mode;
    if (mode.kind === 'partition') for (const c of [...this.#conns]) this.#kill(c);
  }

  /** Back to `pass` (blackholed connections are closed, so their clients notice). */
  heal(): void {
    for (const c of [...this.#conns]) if (c.server === undefined) this.#kill(c);
    this.#mode = { kind: 'pass' };
  }

  /** Forwards new connections to another port (the daemon behind restarted elsewhere). */
  retarget(port: number): void {
    this.#targetPort = port;
  }

  /** Kills every open connection now (whatever the mode). */
  cutAll(): void {
    for (const c of [...this.#conns]) this.#kill(c);
  }

  /** Closes the listener and every connection. */
  async close(): Promise<void> {
    for (const c of [...this.#conns]) this.#kill(c);
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    client.on('error', () => {});
    const mode = this.#mode;
    if (mode.kind === 'partition') {
      this.stats.refused++;
      if (mode.style === 'refuse') {
        client.resetAndDestroy();
        return;
      }
      // Blackhole: keep the socket, forward nothing (closed at heal or by the client).
      const c: Conn = blank(client, undefined);
      this.#conns.add(c);
      client.on('close', () => this.#conns.delete(c));
      client.on('data', () => {});
      return;
    }
    this.stats.accepted++;
    const server = tcpConnect({ host: '127.0.0.1', port: this.#targetPort });
    server.on('error', () => {});
    const c = blank(client, server);
    this.#conns.add(c);
    client.on('data', (chunk: Buffer) => {
      if (c.serverSpoke && !c.requestSeen) this.#onRequest(c);
      this.#forward(c, 'c2s', chunk);
    });
    server.on('data', (chunk: Buffer) => {
      c.serverSpoke = true;
      if (c.swallow) {
        this.stats.swallowed += chunk.length;
        return;
      }
      this.#forward(c, 's2c', chunk);
    });
    client.on('end', () => this.#later(c, 'c2s', 0, () => server.end()));
    server.on('end', () => this.#later(c, 's2c', 0, () => client.end()));
    const done = (): void => {
      for (const t of c.timers) clearTimeout(t);
      c.timers.clear();
      client.destroy();
      server.destroy();
      this.#conns.delete(c);
    };
    // A side that closed is passed on once what was scheduled before it has been written.
    client.on('close', () => this.#later(c, 'c2s', 0, done));
    server.on('close', () => this.#later(c, 's2c', 0, done));
  }

  #onRequest(c: Conn): void {
    c.requestSeen = true;
    this.stats.requests++;
    const mode = this.#mode;
    if (mode.kind === 'drop') {
      c.swallow = true;
      this.#timer(c, mode.cutAfterMs, () => this.#kill(c));
    } else if (mode.kind === 'cut') {
      this.#timer(c, mode.afterMs, () => this.#kill(c));
    }
  }

  #forward(c: Conn, dir: 'c2s' | 's2c', chunk: Buffer): void {
    const to = dir === 'c2s' ? c.server : c.client;
    if (to === undefined) return;
    const mode = this.#mode;
    const delay = mode.kind === 'delay' ? mode.ms : 0;
    const rate = mode.kind === 'pass' || mode.kind === 'delay' ? mode.bytesPerSec : undefined;
    const cost = rate === undefined ? 0 : (chunk.length / rate) * 1000;
    if (delay === 0 && cost === 0 && c.lastAt[dir] <= Date.now()) {
      to.write(chunk);
      return;
    }
    this.#later(c, dir, delay + cost, () => to.write(chunk));
  }

  /** Runs `fn` after `ms`, never before what was scheduled earlier in the same direction. */
  #later(c: Conn, dir: 'c2s' | 's2c', ms: number, fn: () => void): void {
    const now = Date.now();
    const at = Math.max(now + ms, c.lastAt[dir]);
    c.lastAt[dir] = at;
    if (at <= now) {
      fn();
      return;
    }
    this.#timer(c, at - now, fn);
  }

  #timer(c: Conn, ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      c.timers.delete(t);
      fn();
    }, ms);
    c.timers.add(t);
  }

  #kill(c: Conn): void {
    if (!this.#conns.has(c)) return;
    this.#conns.delete(c);
    this.stats.cut++;
    for (const t of c.timers) clearTimeout(t);
    c.timers.clear();
    c.client.resetAndDestroy();
    c.server?.resetAndDestroy();
  }
}

function blank(client: Socket, server: Socket | undefined): Conn {
  return {
    client,
    server,
    serverSpoke: false,
    requestSeen: false,
    swallow: false,
    lastAt: { c2s: 0, s2c: 0 },
    timers: new Set(),
  };
}
