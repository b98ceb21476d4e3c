import { connect } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { encodeBinaryFrame } from './binary-frame.js';
import { WireClient } from './client.js';
import { WireSession } from './client-session.js';
import { CloseCode } from './close-codes.js';
import { MAX_BINARY_FRAME_BYTES, MAX_TEXT_FRAME_BYTES } from './limits.js';
import { WireServer, type WireServerOptions } from './server.js';
import { hostHandler, signed } from './test-fixtures.js';

const servers: WireServer[] = [];
async function start(options: Partial<WireServerOptions> = {}): Promise<WireServer> {
  const s = await WireServer.listen({ handler: hostHandler(), ...options });
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface Closed {
  code: number;
  frames: string[];
}

/** Opens a raw ws connection, sends `data`, and resolves with the close code and text frames received. */
function sendRaw(url: string, data: (string | Buffer)[], maxPayload = 64 * 1024 * 1024): Promise<Closed> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { maxPayload });
    const frames: string[] = [];
    ws.on('message', (d, isBinary) => {
      if (!isBinary) frames.push(String(d));
    });
    ws.on('error', () => {});
    ws.on('open', () => {
      for (const d of data) ws.send(d);
    });
    ws.on('close', (code) => resolve({ code, frames }));
    setTimeout(() => reject(new Error('not closed')), 5000).unref();
  });
}

async function stillServes(server: WireServer): Promise<void> {
  const res = await new WireClient().call(server.url, signed('workload.status', { up: true }));
  expect(res.result).toEqual({ up: true });
}

describe('a server under bad input', () => {
  it('answers malformed JSON with an error frame and closes (4001)', async () => {
    const server = await start();
    const r = await sendRaw(server.url, ['{not json']);
    expect(r.code).toBe(CloseCode.protocol);
    expect(JSON.parse(r.frames[0] ?? '{}')).toMatchObject({ t: 'error', code: 'malformed_frame' });
    await stillServes(server);
  });

  it('answers an unknown frame type with unknown_frame', async () => {
    const server = await start();
    const r = await sendRaw(server.url, [JSON.stringify({ t: 'hello', id: 1 })]);
    expect(r.code).toBe(CloseCode.protocol);
    expect(JSON.parse(r.frames[0] ?? '{}')).toMatchObject({ code: 'unknown_frame' });
  });

  it('refuses an oversized text frame and an oversized binary frame (1009)', async () => {
    const server = await start();
    const text = await sendRaw(server.url, [`{"t":"call","pad":"${'x'.repeat(MAX_TEXT_FRAME_BYTES)}"}`]);
    expect(text.code).toBe(CloseCode.tooBig);
    const bin = await sendRaw(server.url, [Buffer.alloc(MAX_BINARY_FRAME_BYTES + 1)]);
    expect(bin.code).toBe(CloseCode.tooBig);
    await stillServes(server);
  });

  it('closes on a binary frame answering no request, and on junk binary', async () => {
    const server = await start();
    const a = await sendRaw(server.url, [encodeBinaryFrame(1, 77, new Uint8Array(10))]);
    expect(a.code).toBe(CloseCode.protocol);
    const b = await sendRaw(server.url, [Buffer.from([1, 2, 3])]);
    expect(b.code).toBe(CloseCode.protocol);
  });

  it('survives random text and binary frames (fast-check)', async () => {
    const server = await start();
    const frame = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json().map((j) => j),
      fc
        .record({ t: fc.constantFrom('call', 'piece_map', 'fetch_refused', 'error'), id: fc.integer() })
        .map((o) => JSON.stringify(o)),
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 4 }), async (frames) => {
        const ws = new WebSocket(server.url);
        ws.on('error', () => {});
        await new Promise<void>((resolve) => {
          ws.on('open', () => {
            for (const f of frames) ws.send(f);
            setTimeout(() => ws.terminate(), 20);
          });
          ws.on('close', () => resolve());
        });
      }),
      { numRuns: 60 },
    );
    await stillServes(server);
  });

  it('caps authenticated sessions: when all are authenticated the next one is closed with 1013 (Unreachable)', async () => {
    const server = await start({ maxSessions: 2 });
    const hold = await Promise.all([WireSession.connect(server.url), WireSession.connect(server.url)]);
    for (const s of hold) await s.call(signed('workload.status'));
    const err = await new WireClient().call(server.url, signed('workload.place')).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('unreachable');
    for (const s of hold) await s.close();
    await new Promise((r) => setTimeout(r, 50));
    await stillServes(server);
  });

  it('drops a slow client: a half-sent upgrade (slowloris) and an idle session', async () => {
    const server = await start({ handshakeTimeoutMs: 200, idleTimeoutMs: 200 });
    const { port } = server.address;
    const dropped = await new Promise<boolean>((resolve) => {
      const sock = connect(port, '127.0.0.1', () => {
        sock.write('GET / HTTP/1.1\r\nHost: x\r\n');
        const drip = setInterval(() => sock.write('X-A: b\r\n'), 50);
        sock.on('close', () => {
          clearInterval(drip);
          resolve(true);
        });
      });
      sock.on('error', () => {});
      setTimeout(() => resolve(false), 3000).unref();
    });
    expect(dropped).toBe(true);
    const idle = await sendRaw(server.url, []);
    expect(idle.code).toBe(CloseCode.idle);
    await stillServes(server);
  });

  it('stays up after 1,000 garbage connections in a row', async () => {
    const server = await start({ handshakeTimeoutMs: 500 });
    const { port } = server.address;
    const junk = [
      Buffer.from('\x16\x03\x01garbage'),
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'),
      Buffer.from('POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello'),
      Buffer.alloc(300, 0xff),
    ];
    for (let i = 0; i < 1000; i++) {
      await new Promise<void>((resolve) => {
        const sock = connect(port, '127.0.0.1', () => {
          sock.end(junk[i % junk.length] as Buffer);
        });
        sock.on('error', () => resolve());
        sock.on('close', () => resolve());
        sock.resume();
      });
    }
    await stillServes(server);
    expect(server.sessionCount).toBe(0);
  });
});

describe('session liveness and call limits', () => {
  it('terminates a peer that does not answer pings', async () => {
    const server = await start({ pingIntervalMs: 100, idleTimeoutMs: 10_000 });
    const ws = new WebSocket(server.url, { autoPong: false });
    ws.on('error', () => {});
    const code = await new Promise<number>((resolve) => ws.on('close', (c) => resolve(c)));
    expect(code).toBe(1006);
    await vi.waitFor(() => expect(server.sessionCount).toBe(0));
  });

  it('keeps a peer that answers pings past the idle timeout while a call is open', async () => {
    const server = await start({
      pingIntervalMs: 50,
      idleTimeoutMs: 100,
      handler: hostHandler(async (body) => {
        await new Promise((r) => setTimeout(r, 400));
        return body;
      }),
    });
    const res = await new WireClient().call(server.url, signed('workload.status', { slow: true }));
    expect(res.result).toEqual({ slow: true });
  });

  it('closes a session that opens more calls than its cap (4003)', async () => {
    const server = await start({ maxCallsPerSession: 2, handler: () => new Promise(() => {}) });
    const frames = [1, 2, 3].map((id) =>
      JSON.stringify({ t: 'call', id, method: 'workload.status', signed: signed() }),
    );
    const r = await sendRaw(server.url, frames);
    expect(r.code).toBe(CloseCode.tooManyCalls);
    expect(JSON.parse(r.frames[0] ?? '{}')).toMatchObject({ t: 'error', id: 3, code: 'too_many_calls' });
  });
});
