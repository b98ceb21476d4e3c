// Lockout: silent TCP connections and idle sessions, from one address or many, never keep an
// authorised controller from its host. The attackers connect from other loopback addresses
// (127.0.0.2 and up: Linux routes all of 127/8 to lo), the controller from 127.0.0.1.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { WireClient } from './client.js';
import { WireSession } from './client-session.js';
import { CloseCode } from './close-codes.js';
import { WireServer, type WireServerOptions } from './server.js';
import { hostHandler, signed } from './test-fixtures.js';

const servers: WireServer[] = [];
const sockets: (Socket | WebSocket)[] = [];
async function start(options: Partial<WireServerOptions> = {}): Promise<WireServer> {
  const s = await WireServer.listen({ handler: hostHandler(), ...options });
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of sockets.splice(0)) s instanceof WebSocket ? s.terminate() : s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** `n` silent TCP connections from `from` (they connect and never send a byte). */
async function silent(port: number, n: number, from: (i: number) => string): Promise<Socket[]> {
  const opened = await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<Socket>((resolve) => {
          const s = connect({ port, host: '127.0.0.1', localAddress: from(i) }, () => resolve(s));
          s.on('error', () => {});
          s.on('close', () => resolve(s));
          sockets.push(s);
        }),
    ),
  );
  return opened;
}

/** `n` upgraded WebSocket sessions from `from` that never send a frame. */
async function idleSessions(url: string, n: number, from: (i: number) => string): Promise<WebSocket[]> {
  return Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<WebSocket>((resolve) => {
          const ws = new WebSocket(url, { localAddress: from(i) });
          ws.on('error', () => {});
          ws.on('open', () => resolve(ws));
          ws.on('close', () => resolve(ws));
          sockets.push(ws);
        }),
    ),
  );
}

const open = (s: Socket | WebSocket): boolean =>
  s instanceof WebSocket ? s.readyState === WebSocket.OPEN : !s.destroyed && s.readyState === 'open';

async function controllerCall(server: WireServer): Promise<void> {
  const res = await new WireClient().call(server.url, signed('workload.status', { ok: 1 }));
  expect(res.result).toEqual({ ok: 1 });
}

describe('no lockout of an authorised controller', () => {
  it('330 silent TCP connections from one address: it holds at most its per-peer share, the controller gets in', async () => {
    const server = await start();
    const held = await silent(server.address.port, 330, () => '127.0.0.2');
    await vi.waitFor(() => expect(held.filter(open).length).toBeLessThanOrEqual(128));
    expect(server.unauthenticatedCount).toBeLessThanOrEqual(128);
    // The newest ones are the ones kept (an address competes with itself only).
    expect(held.slice(-100).every(open)).toBe(true);
    await controllerCall(server);
  });

  it('330 silent TCP connections from 11 addresses fill the pool: the controller still gets in', async () => {
    const server = await start();
    await silent(server.address.port, 330, (i) => `127.0.0.${2 + (i % 11)}`);
    expect(server.unauthenticatedCount).toBeLessThanOrEqual(256 + 64);
    await controllerCall(server);
    await controllerCall(server);
  });

  it('256 idle sessions from 4 addresses: the controller is not refused with 1013', async () => {
    const server = await start();
    const idle = await idleSessions(server.url, 256, (i) => `127.0.0.${2 + (i % 4)}`);
    expect(idle.filter(open).length).toBe(256);
    expect(server.sessionCount).toBe(256);
    await controllerCall(server);
    // One idle session made room (the oldest of the heaviest address), closed with 4002.
    expect(idle.filter(open).length).toBe(255);
  });

  it('never closes an authenticated session to make room; refuses 1013 only when all are authenticated', async () => {
    const server = await start({ maxSessions: 4 });
    const mine = await WireSession.connect(server.url);
    await mine.call(signed('workload.status'));
    await idleSessions(server.url, 20, (i) => `127.0.0.${2 + (i % 2)}`);
    expect(server.sessionCount).toBe(4);
    const again = await mine.call(signed('workload.status', { still: true }));
    expect(again.result).toEqual({ still: true });
    await controllerCall(server);
    await mine.close();
  });

  it('closes a session that makes no verified call within the handshake timeout (4002)', async () => {
    const server = await start({ handshakeTimeoutMs: 300, idleTimeoutMs: 60_000 });
    const [ws] = await idleSessions(server.url, 1, () => '127.0.0.2');
    const code = await new Promise<number>((resolve) => (ws as WebSocket).on('close', (c) => resolve(c)));
    expect(code).toBe(CloseCode.idle);
    await vi.waitFor(() => expect(server.unauthenticatedCount).toBe(0));
  });
});

/** Upgrades a raw TCP connection by hand, writes `frame`, and resolves with the close code the server sent. */
function rawCloseCode(port: number, frame: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(
        'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
    });
    sockets.push(s);
    let buf = Buffer.alloc(0);
    let upgraded = false;
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        upgraded = true;
        buf = buf.subarray(end + 4);
        s.write(frame);
      }
      // A close frame: 0x88, a length, then the 2-byte code.
      if (buf.length >= 4 && buf[0] === 0x88) resolve(buf.readUInt16BE(2));
    });
    s.on('error', () => {});
    setTimeout(() => reject(new Error('no close frame')), 3000).unref();
  });
}

describe('close codes of the WebSocket layer (docs/protocol.md 13.3)', () => {
  it('1007 for a text frame that is not UTF-8, 1002 for an unmasked client frame', async () => {
    const server = await start();
    const mask = Buffer.from([1, 2, 3, 4]);
    const bad = Buffer.from([0xff, 0xfe].map((b, i) => b ^ (mask[i % 4] as number)));
    const notUtf8 = Buffer.concat([Buffer.from([0x81, 0x80 | 2]), mask, bad]);
    expect(await rawCloseCode(server.address.port, notUtf8)).toBe(1007);
    const unmasked = Buffer.concat([Buffer.from([0x81, 2]), Buffer.from('hi')]);
    expect(await rawCloseCode(server.address.port, unmasked)).toBe(1002);
  });
});
