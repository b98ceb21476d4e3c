// The chaos proxy in front of a real WebSocket echo server, through a real ws client.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { ChaosProxy } from './chaos-proxy.js';

let echo: WebSocketServer;
let proxy: ChaosProxy;
let received = 0;

beforeAll(async () => {
  echo = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => echo.once('listening', () => r()));
  echo.on('connection', (ws) =>
    ws.on('message', (m) => {
      received++;
      ws.send(m);
    }),
  );
  proxy = await ChaosProxy.start((echo.address() as AddressInfo).port);
});

afterAll(async () => {
  await proxy.close();
  await new Promise<void>((r) => echo.close(() => r()));
});

/** Opens a client through the proxy; resolves once open (rejects when the connection fails). */
function open(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(proxy.url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Sends `text`; resolves with the echo, or with `closed`/`timeout`. */
function roundTrip(ws: WebSocket, text: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve('timeout'), timeoutMs);
    ws.once('message', (m) => {
      clearTimeout(t);
      resolve(String(m));
    });
    ws.once('close', () => {
      clearTimeout(t);
      resolve('closed');
    });
    ws.send(text);
  });
}

describe('ChaosProxy', () => {
  it('passes traffic both ways', async () => {
    proxy.heal();
    const ws = await open();
    expect(await roundTrip(ws, 'hello')).toBe('hello');
    ws.close();
  });

  it('delays each direction by the given time, keeping order', async () => {
    proxy.set({ kind: 'delay', ms: 150 });
    const ws = await open();
    const t0 = Date.now();
    expect(await roundTrip(ws, 'slow')).toBe('slow');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    const got: string[] = [];
    const all = new Promise<void>((r) =>
      ws.on('message', (m) => {
        got.push(String(m));
        if (got.length === 3) r();
      }),
    );
    for (const m of ['1', '2', '3']) ws.send(m);
    await all;
    expect(got).toEqual(['1', '2', '3']);
    ws.close();
    proxy.heal();
  });

  it('drop: the server gets the request, its answer never arrives, the connection is cut', async () => {
    proxy.set({ kind: 'drop', cutAfterMs: 300 });
    const ws = await open(); // the handshake answer passes: the request is what comes after it
    const before = received;
    const t0 = Date.now();
    expect(await roundTrip(ws, 'lost')).toBe('closed');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(received).toBe(before + 1);
    expect(proxy.stats.swallowed).toBeGreaterThan(0);
    proxy.heal();
    const again = await open();
    expect(await roundTrip(again, 'back')).toBe('back');
    again.close();
  });

  it('cut: closes both sides after the request', async () => {
    proxy.set({ kind: 'cut', afterMs: 0 });
    const ws = await open();
    const answer = await roundTrip(ws, 'maybe');
    expect(['maybe', 'closed']).toContain(answer);
    if (answer === 'maybe') await new Promise((r) => ws.once('close', r));
    expect(ws.readyState).toBe(WebSocket.CLOSED);
    proxy.heal();
  });

  it('partition: kills open connections, refuses or blackholes new ones; heal restores', async () => {
    proxy.heal();
    const ws = await open();
    const closed = new Promise((r) => ws.once('close', r));
    proxy.set({ kind: 'partition', style: 'refuse' });
    await closed;
    await expect(open()).rejects.toThrow();
    proxy.set({ kind: 'partition', style: 'blackhole' });
    const hanging = new WebSocket(proxy.url, { handshakeTimeout: 300 });
    await expect(
      new Promise((resolve, reject) => {
        hanging.once('open', resolve);
        hanging.once('error', reject);
      }),
    ).rejects.toThrow(/timed out/);
    proxy.heal();
    const back = await open();
    expect(await roundTrip(back, 'healed')).toBe('healed');
    back.close();
    expect(proxy.stats.refused).toBeGreaterThanOrEqual(2);
  });

  it('throttles to a byte rate', async () => {
    proxy.set({ kind: 'pass', bytesPerSec: 100_000 });
    const ws = await open();
    const t0 = Date.now();
    const big = 'x'.repeat(30_000);
    expect((await roundTrip(ws, big, 5000)).length).toBe(30_000);
    // 30 kB each way at 100 kB/s: at least 0.5 s.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(500);
    ws.close();
    proxy.heal();
  });
});
