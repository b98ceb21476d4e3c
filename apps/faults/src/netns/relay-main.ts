// The relay process of a namespace cluster, run inside the controller's namespace (`ip netns exec`):
// TCP listeners that forward to a target address, each with latency, jitter and loss added in user
// space (the kernel here has no netem), and probes that connect from the controller's namespace.
// Driven by JSON lines on standard input, answered by JSON lines on standard output:
//   {"seq":1,"op":"listen","id":"h0","host":"127.0.0.1","port":8000,"target":"10.213.1.10:7100"}
//   {"seq":2,"op":"mode","id":"h0","mode":{"latencyMs":80,"jitterMs":20,"loss":0.05,"stallMs":300,"seed":7}}
//   {"seq":3,"op":"stats","id":"h0"}
//   {"seq":4,"op":"probe","target":"10.213.1.10:7100","timeoutMs":1500}
// Loss on a TCP stream is what TCP makes of it: a lost segment is retransmitted after a timeout, so
// the stream stalls and nothing is missing. A chunk "lost" with probability `loss` is therefore held
// back `stallMs` (doubled for each further loss in a row, as TCP's backoff does), order kept.
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { createInterface } from 'node:readline';
import { Rng } from '../rng.js';

/** The user-space impairment of a relay listener. */
export interface RelayMode {
  readonly latencyMs: number;
  readonly jitterMs: number;
  /** Probability (0..1) that a chunk is "lost" (held back by a retransmission stall). */
  readonly loss: number;
  readonly stallMs: number;
  readonly seed: number;
}

/** What a relay listener did so far (cumulative). */
export interface RelayStats {
  connections: number;
  chunks: number;
  bytes: number;
  /** Chunks delayed by latency or jitter. */
  delayed: number;
  /** Chunks held back by a loss stall. */
  stalls: number;
  /** Sum of the delays applied, ms. */
  delayMsTotal: number;
  /** When the last impaired chunk went through (epoch ms; 0: never). */
  lastImpairedAt: number;
  /** When the first impaired chunk of the current mode went through (epoch ms; 0: none yet). */
  firstImpairedAt: number;
}

const PASS: RelayMode = { latencyMs: 0, jitterMs: 0, loss: 0, stallMs: 0, seed: 0 };

interface Listener {
  readonly server: Server;
  readonly target: { host: string; port: number };
  mode: RelayMode;
  rng: Rng;
  readonly stats: RelayStats;
  readonly sockets: Set<Socket>;
}

const listeners = new Map<string, Listener>();

function splitTarget(t: string): { host: string; port: number } {
  const i = t.lastIndexOf(':');
  return { host: t.slice(0, i), port: Number(t.slice(i + 1)) };
}

function pipe(l: Listener, from: Socket, to: Socket): void {
  let lastAt = 0;
  let lossRun = 0;
  from.on('data', (chunk: Buffer) => {
    const m = l.mode;
    l.stats.chunks++;
    l.stats.bytes += chunk.length;
    let delay = m.latencyMs + (m.jitterMs > 0 ? l.rng.next() * m.jitterMs : 0);
    if (delay > 0) l.stats.delayed++;
    if (m.loss > 0 && l.rng.chance(m.loss)) {
      delay += m.stallMs * 2 ** Math.min(lossRun, 4);
      lossRun++;
      l.stats.stalls++;
    } else lossRun = 0;
    if (delay <= 0 && lastAt <= Date.now()) {
      to.write(chunk);
      return;
    }
    const now = Date.now();
    if (l.stats.firstImpairedAt === 0) l.stats.firstImpairedAt = now;
    l.stats.lastImpairedAt = now;
    l.stats.delayMsTotal += delay;
    const at = Math.max(now + delay, lastAt);
    lastAt = at;
    setTimeout(() => {
      if (!to.destroyed) to.write(chunk);
    }, at - now);
  });
}

function listen(id: string, host: string, port: number, target: string): Promise<number> {
  const t = splitTarget(target);
  const server = createServer();
  const l: Listener = {
    server,
    target: t,
    mode: PASS,
    rng: new Rng(1),
    stats: {
      connections: 0,
      chunks: 0,
      bytes: 0,
      delayed: 0,
      stalls: 0,
      delayMsTotal: 0,
      lastImpairedAt: 0,
      firstImpairedAt: 0,
    },
    sockets: new Set(),
  };
  server.on('connection', (client) => {
    l.stats.connections++;
    const upstream = tcpConnect(t.port, t.host);
    for (const s of [client, upstream]) {
      l.sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => {});
      s.on('close', () => {
        l.sockets.delete(s);
        // Half a relayed connection gone: the other half goes too (as the peer would see a close).
        client.destroy();
        upstream.destroy();
      });
    }
    pipe(l, client, upstream);
    pipe(l, upstream, client);
  });
  listeners.set(id, l);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address();
      resolve(typeof a === 'object' && a !== null ? a.port : 0);
    });
  });
}

function probe(
  target: string,
  timeoutMs: number,
): Promise<{ result: string; ms: number; sentAt: number; code?: string }> {
  const t = splitTarget(target);
  const t0 = Date.now();
  return new Promise((resolve) => {
    const s = tcpConnect(t.port, t.host);
    const done = (result: string, code?: string): void => {
      clearTimeout(timer);
      s.destroy();
      resolve({ result, ms: Date.now() - t0, sentAt: t0, ...(code === undefined ? {} : { code }) });
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    s.once('connect', () => done('connected'));
    s.once('error', (err: NodeJS.ErrnoException) =>
      done(
        err.code === 'ECONNREFUSED' ? 'refused' : err.code === 'ECONNRESET' ? 'reset' : 'unreachable',
        err.code,
      ),
    );
  });
}

/** An echo server (for the harness's own test of how a fault looks to TCP). */
function serveEcho(host: string, port: number): Promise<number> {
  const server = createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address();
      resolve(typeof a === 'object' && a !== null ? a.port : 0);
    });
  });
}

/** Held connections: everything that happened to each (data, error codes, close). */
const held = new Map<string, { socket: Socket; events: string[]; received: number }>();

function openHeld(id: string, target: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const t = splitTarget(target);
  return new Promise((resolve) => {
    const socket = tcpConnect(t.port, t.host);
    const h = { socket, events: [] as string[], received: 0 };
    const timer = setTimeout(() => resolve({ result: 'timeout' }), timeoutMs);
    socket.on('data', (d: Buffer) => {
      h.received += d.length;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => h.events.push(`error ${err.code ?? err.message}`));
    socket.on('close', () => h.events.push('close'));
    socket.once('connect', () => {
      clearTimeout(timer);
      held.set(id, h);
      resolve({ result: 'connected' });
    });
  });
}

async function pingHeld(id: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const h = held.get(id);
  if (h === undefined) throw new Error(`no held connection ${id}`);
  const before = h.received;
  const t0 = Date.now();
  if (!h.socket.destroyed) h.socket.write('x');
  while (Date.now() - t0 < timeoutMs && h.received === before && !h.socket.destroyed) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    result: h.received > before ? 'echoed' : h.socket.destroyed ? 'closed' : 'timeout',
    ms: Date.now() - t0,
    events: h.events,
  };
}

async function handle(msg: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = String(msg.id ?? '');
  switch (msg.op) {
    case 'listen':
      return { port: await listen(id, String(msg.host), Number(msg.port), String(msg.target)) };
    case 'mode': {
      const l = listeners.get(id);
      if (l === undefined) throw new Error(`no listener ${id}`);
      // cast: the harness (relay.ts) sends a RelayMode, the only writer of this pipe.
      const m = { ...PASS, ...(msg.mode as Partial<RelayMode>) };
      l.mode = m;
      l.rng = new Rng(m.seed);
      l.stats.firstImpairedAt = 0;
      return {};
    }
    case 'stats': {
      const l = listeners.get(id);
      if (l === undefined) throw new Error(`no listener ${id}`);
      return { stats: l.stats };
    }
    case 'probe':
      return await probe(String(msg.target), Number(msg.timeoutMs ?? 1500));
    case 'serve':
      return { port: await serveEcho(String(msg.host), Number(msg.port)) };
    case 'open':
      return await openHeld(id, String(msg.target), Number(msg.timeoutMs ?? 1500));
    case 'ping':
      return await pingHeld(id, Number(msg.timeoutMs ?? 1500));
    default:
      throw new Error(`unknown op ${String(msg.op)}`);
  }
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let msg: Record<string, unknown>;
  try {
    // cast: one JSON object per line from the harness.
    msg = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  handle(msg).then(
    (r) => process.stdout.write(`${JSON.stringify({ seq: msg.seq, ok: true, ...r })}\n`),
    (err: unknown) =>
      process.stdout.write(`${JSON.stringify({ seq: msg.seq, ok: false, error: String(err) })}\n`),
  );
});
// The harness going away (its pipe closed) ends the relay.
rl.on('close', () => process.exit(0));
process.stdout.write(`${JSON.stringify({ msg: 'listening' })}\n`);
