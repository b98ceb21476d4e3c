// The event stream (`GET /v1/events`) and the dashboard's sessions against a real ApiServer on
// 127.0.0.1 with a real PlaneEvents bus.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaneEvents } from '@heddle/control-plane';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiFailure } from './errors.js';
import { followEvents, type StreamEvent } from './event-follower.js';
import type { OperatorHandlers } from './handlers.js';
import { ROUTE_NAMES } from './routes.js';
import { ApiServer } from './server.js';
import { SseParser } from './sse-parser.js';
import { StaticUi, UI_CSP } from './static-ui.js';

const TOKEN = 't'.repeat(64);
const quiet = { info: () => undefined, error: () => undefined };
// cast: every route answers not_found here; the tests exercise the stream and the sessions only.
const handlers = Object.fromEntries(
  ROUTE_NAMES.map((n) => [
    n,
    n === 'health'
      ? () => ({ controller: 'ab'.repeat(16), nodes: 0, instances: 0, unsettled: 0 })
      : () => {
          throw new ApiFailure('not_found', 'none here');
        },
  ]),
) as unknown as OperatorHandlers;

const open: ApiServer[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close(100);
});

async function server(events: PlaneEvents, port = 0, heartbeatMs = 15_000): Promise<ApiServer> {
  const s = await ApiServer.listen({
    handlers,
    auth: { token: TOKEN },
    log: quiet,
    port,
    events,
    heartbeatMs,
  });
  open.push(s);
  return s;
}

interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Resolves once `n` events (or the end of the stream) arrived; the raw text so far. */
  until(n: number): Promise<{ events: { type: string; data: string; id: string }[]; text: string }>;
  close(): void;
}

/** A raw GET of the event stream. */
function stream(url: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/events`, { headers });
    req.once('error', reject);
    req.once('response', (res) => {
      const parser = new SseParser();
      const events: { type: string; data: string; id: string }[] = [];
      let text = '';
      let ended = false;
      const waiters: (() => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        for (const m of parser.feed(c)) events.push({ type: m.type, data: m.data, id: m.lastEventId });
        for (const w of waiters.splice(0)) w();
      });
      res.on('end', () => {
        ended = true;
        for (const w of waiters.splice(0)) w();
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        until: async (n) => {
          while (events.length < n && !ended) await new Promise<void>((r) => waiters.push(r));
          return { events, text };
        },
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}

const bearer = { authorization: `Bearer ${TOKEN}` };

describe('GET /v1/events', () => {
  it('refuses without the token; opens with stream.open and then sends each event live', async () => {
    const bus = new PlaneEvents({ epoch: 'aaaa' });
    const s = await server(bus);
    const refused = await stream(s.url, {});
    expect(refused.status).toBe(401);
    const r = await stream(s.url, bearer);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await r.until(1);
    bus.publish('node.removed', { node_id: 'n1' });
    const { events, text } = await r.until(2);
    expect(text.startsWith('retry: 2000\n\n')).toBe(true);
    expect(events[0]).toEqual({
      type: 'stream.open',
      id: 'aaaa-0',
      data: JSON.stringify({ epoch: 'aaaa', last_id: 'aaaa-0' }),
    });
    expect(events[1]?.id).toBe('aaaa-1');
    expect(JSON.parse(events[1]?.data ?? '')).toEqual({
      id: 'aaaa-1',
      type: 'node.removed',
      at_ms: expect.any(Number),
      data: { node_id: 'n1' },
    });
    r.close();
  });

  it('Last-Event-ID resumes after the id given; an id it cannot continue gets stream.reset', async () => {
    const bus = new PlaneEvents({ epoch: 'bbbb', ringSize: 2 });
    const s = await server(bus);
    for (const n of ['a', 'b', 'c']) bus.publish('node.removed', { node_id: n });
    const resumed = await stream(s.url, { ...bearer, 'last-event-id': 'bbbb-2' });
    expect((await resumed.until(1)).events.map((e) => e.id)).toEqual(['bbbb-3']);
    resumed.close();
    for (const id of ['bbbb-0', 'cccc-2', 'nonsense']) {
      const r = await stream(s.url, { ...bearer, 'last-event-id': id });
      const { events } = await r.until(1);
      expect(events[0]?.type, id).toBe('stream.reset');
      expect(events[0]?.id).toBe('bbbb-3');
      expect(JSON.parse(events[0]?.data ?? '')).toEqual({ epoch: 'bbbb', last_id: 'bbbb-3', requested: id });
      r.close();
    }
  });

  it('an idle stream gets heartbeat comments; closing the server ends every stream', async () => {
    const bus = new PlaneEvents();
    const s = await ApiServer.listen({
      handlers,
      auth: { token: TOKEN },
      log: quiet,
      port: 0,
      events: bus,
      heartbeatMs: 50,
    });
    const r = await stream(s.url, bearer);
    const beats = async (): Promise<number> => (await r.until(0)).text.split(': heartbeat\n\n').length - 1;
    for (let i = 0; i < 200 && (await beats()) < 2; i++) await new Promise((res) => setTimeout(res, 20));
    await s.close(5_000);
    const { text } = await r.until(99);
    expect(text.split(': heartbeat\n\n').length - 1).toBeGreaterThanOrEqual(2);
    expect(bus.subscribers).toBe(0);
  });

  it('followEvents reconnects with Last-Event-ID and gets what was published while it was away', async () => {
    const bus = new PlaneEvents({ epoch: 'dddd' });
    const first = await server(bus);
    const port = Number(new URL(first.url).port);
    const seen: StreamEvent[] = [];
    const reconnects: string[] = [];
    const ctl = new AbortController();
    let notify = (): void => undefined;
    const follow = followEvents({
      url: first.url,
      token: TOKEN,
      signal: ctl.signal,
      onEvent: (e) => {
        seen.push(e);
        notify();
      },
      onReconnect: (reason) => reconnects.push(reason),
    });
    const waitFor = async (n: number): Promise<void> => {
      while (seen.length < n) await new Promise<void>((r) => (notify = r));
    };
    await waitFor(1);
    bus.publish('node.removed', { node_id: 'x' });
    await waitFor(2);
    await first.close(100);
    open.splice(open.indexOf(first), 1);
    bus.publish('node.removed', { node_id: 'while-away' });
    await server(bus, port);
    await waitFor(3);
    ctl.abort();
    await follow;
    expect(seen.map((e) => `${e.type} ${e.id}`)).toEqual([
      'stream.open dddd-0',
      'node.removed dddd-1',
      'node.removed dddd-2',
    ]);
    expect(reconnects.length).toBeGreaterThanOrEqual(1);
  });

  it('followEvents drops a connection that goes silent (no heartbeat) and makes it again', async () => {
    let connections = 0;
    const resumedFrom: (string | undefined)[] = [];
    const silent = createServer((req, res) => {
      connections += 1;
      const last = req.headers['last-event-id'];
      resumedFrom.push(typeof last === 'string' ? last : undefined);
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`retry: 10\n\nid: ee-${connections}\nevent: stream.open\ndata: {}\n\n`);
      // then nothing: a peer that died without closing the connection
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    // cast: a server listening on a TCP port has an AddressInfo address.
    const { port } = silent.address() as AddressInfo;
    const reasons: string[] = [];
    const ids: string[] = [];
    const ctl = new AbortController();
    await followEvents({
      url: `http://127.0.0.1:${port}`,
      token: TOKEN,
      signal: ctl.signal,
      idleTimeoutMs: 150,
      onEvent: (e) => {
        ids.push(e.id);
        if (ids.length === 2) ctl.abort();
      },
      onReconnect: (reason) => reasons.push(reason),
    });
    silent.closeAllConnections();
    await new Promise<void>((r) => silent.close(() => r()));
    expect(ids).toEqual(['ee-1', 'ee-2']);
    expect(reasons).toEqual(['nothing heard for 150 ms']);
    expect(resumedFrom).toEqual([undefined, 'ee-1']);
  });

  it('followEvents rejects a refused token with unauthorized', async () => {
    const s = await server(new PlaneEvents());
    await expect(
      followEvents({ url: s.url, token: 'wrong', onEvent: () => undefined }),
    ).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

/** A request with a JSON body; the answer's status, headers and body. */
function call(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers });
    req.once('error', reject);
    req.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('dashboard sessions', () => {
  it('a login exchanges the token for an HttpOnly SameSite=Strict cookie that the routes and the stream accept', async () => {
    const s = await server(new PlaneEvents());
    expect((await call(`${s.url}/v1/session`, 'POST', {}, { token: 'wrong' })).status).toBe(401);
    expect((await call(`${s.url}/v1/session`, 'POST', {}, { nope: 1 })).status).toBe(400);
    const login = await call(`${s.url}/v1/session`, 'POST', {}, { token: TOKEN });
    expect(login.status).toBe(200);
    const setCookie = String(login.headers['set-cookie']);
    expect(setCookie).toMatch(
      /^heddle_session=[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/,
    );
    expect(setCookie).not.toContain(TOKEN);
    const cookie = { cookie: setCookie.split(';')[0] ?? '' };
    expect((await call(`${s.url}/v1/session`, 'GET', cookie)).status).toBe(200);
    expect((await call(`${s.url}/v1/health`, 'GET', cookie)).status).toBe(200);
    const r = await stream(s.url, cookie);
    expect(r.status).toBe(200);
    r.close();
    // A change with the cookie needs the x-heddle-request header (a cross-site form cannot send it).
    expect((await call(`${s.url}/v1/settle`, 'POST', cookie, {})).status).toBe(401);
    expect(
      (await call(`${s.url}/v1/settle`, 'POST', { ...cookie, 'x-heddle-request': '1' }, {})).status,
    ).toBe(404);
    const out = await call(`${s.url}/v1/session`, 'DELETE', cookie);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await call(`${s.url}/v1/health`, 'GET', cookie)).status).toBe(401);
    expect(
      (await call(`${s.url}/v1/health`, 'GET', { cookie: `heddle_session=${'0'.repeat(64)}` })).status,
    ).toBe(401);
  });
});

describe('the dashboard files under /ui/', () => {
  it('served without credentials with the CSP; only the built files can be named; /ui redirects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heddle-ui-test-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(join(dir, 'app.js'), 'export {};');
    writeFileSync(join(dir, 'notes.txt'), 'not served: unknown type');
    writeFileSync(join(tmpdir(), 'heddle-ui-secret.js'), 'SECRET-CONTENT');
    const ui = new StaticUi(dir);
    expect(ui.names()).toEqual(['app.js', 'index.html']);
    const s = await ApiServer.listen({ handlers, auth: { token: TOKEN }, log: quiet, port: 0, ui });
    open.push(s);
    const index = await call(`${s.url}/ui/`, 'GET', {});
    expect(index.status).toBe(200);
    expect(index.body).toContain('<title>x</title>');
    expect(index.headers['content-security-policy']).toBe(UI_CSP);
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect((await call(`${s.url}/ui/instances`, 'GET', {})).body).toContain('<title>x</title>');
    const js = await call(`${s.url}/ui/app.js`, 'GET', {});
    expect([js.status, js.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    const redirect = await call(`${s.url}/ui`, 'GET', {});
    expect([redirect.status, redirect.headers.location]).toEqual([308, '/ui/']);
    for (const path of [
      '/ui/notes.txt',
      '/ui/%2e%2e/heddle-ui-secret.js',
      '/ui/..%2fheddle-ui-secret.js',
      '/ui/x/app.js',
    ]) {
      // 404, or 401 where the URL normalises out of /ui/ (then it is an API path and needs credentials).
      const r = await call(`${s.url}${path}`, 'GET', {});
      expect([404, 401], path).toContain(r.status);
      expect(r.body).not.toContain('SECRET-CONTENT');
    }
    expect((await call(`${s.url}/ui/`, 'POST', {}, {})).status).toBe(405);
    // The API itself still needs credentials.
    expect((await call(`${s.url}/v1/health`, 'GET', {})).status).toBe(401);
  });

  it('a directory without index.html is refused (the dashboard was not built)', () => {
    expect(() => new StaticUi(mkdtempSync(join(tmpdir(), 'heddle-ui-empty-')))).toThrow('no index.html');
  });
});
