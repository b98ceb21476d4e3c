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
