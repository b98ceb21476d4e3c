// A test tool (not part of the app): a TCP proxy in front of a real `heddle-host` that holds one of the
// host's answers. Controllers reach the host through it (the node is added by the proxy's URL). Bytes
// from the controller to the host pass untouched; the host's WebSocket frames to the controller
// (unmasked, so readable: docs/protocol.md 13.2) are parsed, and the first `result` frame whose signed
// response matches the armed predicate is held back, while every other frame (the host's package fetch
// requests, other calls' answers, pings) passes. So a test can let a `workload.place` reach the host
// and be acted on there, and keep its answer from the controller for as long as it likes: the window
// between "the host made the instance" and "the controller recorded it".
import { connect, createServer, type Socket } from 'node:net';

/** The host's signed response in a held `result` frame (its payload, parsed). */
export interface HeldAnswer {
  /** The response's `method` (`workload.place`). */
  readonly method: string;
  /** The response's `outcome` (`{status: "ok", result}` or a refusal). */
  readonly outcome: { readonly status: string; readonly result?: Record<string, unknown> };
}

/** A proxy that holds one answer of the host (see the file's comment). */
export interface AnswerHoldProxy {
  /** `ws://127.0.0.1:<port>`: the URL to add the node by. */
  readonly url: string;
  /**
   * Arms the hold: the next `result` frame whose parsed response satisfies `match` is kept back.
   * Resolves with that response once it was held (the host has answered, the controller has not got it).
   */
  holdNext(match: (answer: HeldAnswer) => boolean): Promise<HeldAnswer>;
  /** Sends what was held on (to a connection still open; dropped when it closed meanwhile). */
  release(): void;
  close(): Promise<void>;
}

/** One direction's WebSocket frame reader: calls `frame` with each whole frame's raw bytes. */
function frameReader(frame: (raw: Buffer, opcode: number, fin: boolean, payload: Buffer) => void) {
  let buf = Buffer.alloc(0);
  let upgraded = false;
  let header = '';
  return (chunk: Buffer, passHeader: (b: Buffer) => void): void => {
    buf = Buffer.concat([buf, chunk]);
    if (!upgraded) {
      // The HTTP upgrade answer comes first (it ends with an empty line); it passes as is.
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      header = buf.subarray(0, end + 4).toString('latin1');
      passHeader(buf.subarray(0, end + 4));
      buf = buf.subarray(end + 4);
      upgraded = header.startsWith('HTTP/1.1 101');
      if (!upgraded) {
        passHeader(buf);
        buf = Buffer.alloc(0);
        return;
      }
    }
    for (;;) {
      if (buf.length < 2) return;
      const b0 = buf[0] as number;
      const b1 = buf[1] as number;
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      const mask = masked ? buf.subarray(off, off + 4) : undefined;
      if (masked) off += 4;
      if (buf.length < off + len) return;
      const raw = buf.subarray(0, off + len);
      let payload = Buffer.from(buf.subarray(off, off + len));
      if (mask !== undefined && mask.length === 4) {
        payload = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
      }
      buf = buf.subarray(off + len);
      frame(Buffer.from(raw), b0 & 0x0f, (b0 & 0x80) !== 0, payload);
    }
  };
}

/** The parsed signed response of a host `result` text frame, or undefined for any other frame. */
function answerOf(opcode: number, fin: boolean, payload: Buffer): HeldAnswer | undefined {
  if (opcode !== 1 || !fin) return undefined;
  try {
    // cast: probing a text frame's JSON for the fields of a result frame (docs/protocol.md 13.2)
    const f = JSON.parse(payload.toString('utf8')) as { t?: unknown; signed?: { payload?: unknown } };
    if (f.t !== 'result' || typeof f.signed?.payload !== 'string') return undefined;
    // cast: the signed payload of a result is a CtlResponse (docs/protocol.md 7); read, not trusted
    const r = JSON.parse(f.signed.payload) as { method?: unknown; outcome?: HeldAnswer['outcome'] };
    if (typeof r.method !== 'string' || typeof r.outcome !== 'object' || r.outcome === null) return undefined;
    return { method: r.method, outcome: r.outcome };
  } catch {
    return undefined;
  }
}

/** Starts an {@link AnswerHoldProxy} to the host listening on `target` (`ws://127.0.0.1:<port>`). */
export async function startAnswerHoldProxy(target: string): Promise<AnswerHoldProxy> {
  const port = Number(new URL(target).port);
  let armed: { match: (a: HeldAnswer) => boolean; resolve: (a: HeldAnswer) => void } | undefined;
  const held: { socket: Socket; raw: Buffer }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (d) => upstream.write(d));
    const read = frameReader((raw, opcode, fin, payload) => {
      const answer = armed === undefined ? undefined : answerOf(opcode, fin, payload);
      if (answer !== undefined && armed?.match(answer) === true) {
        const { resolve } = armed;
        armed = undefined;
        held.push({ socket: client, raw });
        resolve(answer);
        return;
      }
      client.write(raw);
    });
    upstream.on('data', (d: Buffer) => read(d, (b) => client.write(b)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  const own = typeof a === 'object' && a !== null ? a.port : 0;
  return {
    url: `ws://127.0.0.1:${own}`,
    holdNext: (match) =>
      new Promise<HeldAnswer>((resolve) => {
        armed = { match, resolve };
      }),
    release: () => {
      for (const h of held.splice(0)) if (!h.socket.destroyed) h.socket.write(h.raw);
    },
    close: async () => {
      armed = undefined;
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
