import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SeedSimulator } from './seed-simulator.js';
import { call, sleep } from './sim-request.test-util.js';

const TOKEN = 'tok-ABCdef0123456789-secret';
let sim: SeedSimulator;
const api = (method: string, path: string, o: Parameters<typeof call>[3] = {}) =>
  call(sim.url, method, `/api/v1${path}`, { token: TOKEN, ...o });
const anon = (method: string, path: string, o: Parameters<typeof call>[3] = {}) =>
  call(sim.url, method, `/api/v1${path}`, o);

beforeEach(async () => {
  sim = await SeedSimulator.start({ tokens: [TOKEN], installDelayMs: 10, tickMs: 40 });
});
afterEach(async () => {
  await sim.close();
  // The token never shows in the request log, whatever the test did.
  expect(JSON.stringify(sim.requests)).not.toContain(TOKEN);
});

describe('SeedSimulator routes', () => {
  it('answers status, identity and pair status without a token', async () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.spki).toBeUndefined();
    const s = await anon('GET', '/status');
    expect(s.status).toBe(200);
    expect(s.json).toMatchObject({ firmware: expect.any(String), uptime_secs: expect.any(Number) });
    expect((await anon('GET', '/identity')).json).toMatchObject({
      device_id: expect.stringMatching(/^seed-sim-/),
    });
    expect((await anon('GET', '/pair/status')).json).toEqual({
      window_open: false,
      window_secs_left: 0,
      paired_clients: 1,
    });
  });

  it('answers unknown routes and methods with a JSON error', async () => {
    for (const [m, p, status] of [
      ['GET', '/nope', 404],
      ['GET', '/api/v1', 404],
      ['GET', '/api/v2/status', 404],
      ['POST', '/api/v1/status', 405],
      ['GET', '/api/v1/apps/install', 405],
      ['POST', '/api/v1/apps/air-quality/reboot', 404],
      ['GET', '/api/v1/apps/Bad%20Id/logs', 400],
      ['GET', '/api/v1/apps/%2e%2e/logs', 404],
    ] as const) {
      const a = await call(sim.url, m, p, { token: TOKEN });
      expect([m, p, a.status]).toEqual([m, p, status]);
      expect(a.headers['content-type']).toBe('application/json');
      expect(a.json).toEqual({ error: expect.any(String) });
    }
  });

  it('refuses app routes with 401 without a token and 403 with an unknown one', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/apps'],
      ['GET', '/apps/available'],
      ['POST', '/apps/install', { id: 'air-quality' }],
      ['POST', '/apps/air-quality/start'],
      ['POST', '/apps/air-quality/stop'],
      ['DELETE', '/apps/air-quality'],
      ['GET', '/apps/air-quality/logs?lines=5'],
      ['POST', '/apps/air-quality/console', { command: 'read' }],
      ['GET', '/apps/air-quality/config'],
      ['PUT', '/apps/air-quality/config', { a: 1 }],
    ];
    for (const [m, p, body] of routes) {
      const none = await anon(m, p, body === undefined ? {} : { body });
      expect([m, p, none.status]).toEqual([m, p, 401]);
      const bad = await anon(m, p, { token: 'not-a-paired-token', ...(body === undefined ? {} : { body }) });
      expect([m, p, bad.status]).toEqual([m, p, 403]);
      expect(bad.text).not.toContain('not-a-paired-token');
    }
    expect(sim.installed()).toEqual([]);
    const seen = sim.requests.filter((r) => r.path.startsWith('/api/v1/apps'));
    expect(seen.filter((r) => !r.token)).toHaveLength(routes.length);
    expect(seen.every((r) => r.status === 401 || r.status === 403)).toBe(true);
  });

  it('lists the store and installs with auto-start; a running cog writes logs', async () => {
    const store = await api('GET', '/apps/available');
    expect(store.json).toMatchObject({
      cogs: expect.arrayContaining([expect.objectContaining({ id: 'vibration' })]),
    });
    const inst = await api('POST', '/apps/install', { body: { id: 'air-quality' } });
    expect(inst.status).toBe(200);
    expect(inst.json).toMatchObject({
      id: 'air-quality',
      version: '1.2.0',
      running: true,
      pid: expect.any(Number),
    });
    expect((await api('GET', '/apps')).json).toEqual({
      installed: [{ id: 'air-quality', version: '1.2.0', running: true, pid: expect.any(Number) }],
    });
    await sleep(150);
    const logs = (await api('GET', '/apps/air-quality/logs?lines=2')).json as {
      output: string[];
      errors: string[];
    };
    expect(logs.output).toHaveLength(2);
    expect(JSON.parse(logs.output[1] ?? '')).toEqual({ cog: 'air-quality', reading: expect.any(Number) });
    expect(logs.errors).toEqual([]);
    expect((await api('POST', '/apps/install', { body: { id: 'air-quality' } })).status).toBe(409);
    const missing = await api('POST', '/apps/install', { body: { id: 'not-in-store' } });
    expect([missing.status, missing.json]).toEqual([404, { error: 'cog not-in-store is not in the store' }]);
  });

  it('starts and stops, and refuses beyond the concurrency cap', async () => {
    for (const id of ['air-quality', 'vibration', 'presence']) {
      expect((await api('POST', '/apps/install', { body: { id } })).status).toBe(200);
    }
    const fourth = await api('POST', '/apps/install', { body: { id: 'thermal' } });
    expect(fourth.status).toBe(409);
    expect(fourth.json).toEqual({ error: expect.stringContaining('concurrency cap 3') });
    expect(sim.installed().map((c) => c.id)).not.toContain('thermal');
    sim.setAutoStart(false);
    expect((await api('POST', '/apps/install', { body: { id: 'thermal' } })).json).toMatchObject({
      running: false,
    });
    expect((await api('POST', '/apps/thermal/start')).status).toBe(409);
    const stopped = await api('POST', '/apps/presence/stop');
    expect(stopped.json).toEqual({ id: 'presence', version: '2.0.0', running: false, pid: null });
    const count = async () =>
      ((await api('GET', '/apps/presence/logs?lines=10000')).json as { output: [] }).output.length;
    const before = await count();
    await sleep(100);
    expect(await count()).toBe(before);
    expect((await api('POST', '/apps/thermal/start', { body: {} })).json).toMatchObject({ running: true });
    expect((await api('POST', '/apps/thermal/start')).status).toBe(200);
    expect((await api('POST', '/apps/ghost/start')).status).toBe(404);
  });

  it('refuses a console run while another cog holds the sensor feed', async () => {
    await api('POST', '/apps/install', { body: { id: 'air-quality' } });
    await api('POST', '/apps/install', { body: { id: 'vibration' } });
    const busy = await api('POST', '/apps/vibration/console', { body: { command: 'read' } });
    expect([busy.status, busy.json]).toEqual([
      409,
      { error: 'sensor feed busy: air-quality holds UDP 5006' },
    ]);
    await api('POST', '/apps/air-quality/stop');
    const run = await api('POST', '/apps/vibration/console', { body: { command: 'calibrate' } });
    expect(run.status).toBe(200);
    expect(run.json).toMatchObject({
      output: ['vibration> calibrate', expect.any(String)],
      errors: [],
      exit_code: 0,
    });
    const fail = await api('POST', '/apps/vibration/console', { body: { command: 'fail' } });
    expect(fail.json).toMatchObject({ output: [], exit_code: 1 });
    expect((await api('POST', '/apps/ghost/console', { body: { command: 'x' } })).status).toBe(404);
  });

  it('gets and puts a cog config', async () => {
    await api('POST', '/apps/install', { body: { id: 'presence' } });
    expect((await api('GET', '/apps/presence/config')).json).toMatchObject({ enabled: true });
    const put = await api('PUT', '/apps/presence/config', {
      body: { threshold: 0.5, zone: 'hall', on: false },
    });
    expect(put.json).toEqual({ threshold: 0.5, zone: 'hall', on: false });
    expect(sim.installed()[0]?.config).toEqual({ threshold: 0.5, zone: 'hall', on: false });
    expect((await api('PUT', '/apps/presence/config', { body: { nested: { a: 1 } } })).status).toBe(400);
    expect((await api('GET', '/apps/ghost/config')).status).toBe(404);
  });

  it('stops a running cog before uninstalling it', async () => {
    await api('POST', '/apps/install', { body: { id: 'vibration' } });
    const del = await api('DELETE', '/apps/vibration');
    expect(del.json).toEqual({ id: 'vibration', removed: true });
    expect(sim.installed()).toEqual([]);
    expect((await api('DELETE', '/apps/vibration')).status).toBe(404);
    expect((await api('GET', '/apps/vibration/logs')).status).toBe(404);
  });

  it('pairs only while the window is open, and the window closes by itself', async () => {
    await sim.close();
    sim = await SeedSimulator.start({ pairWindowSecs: 0.5 });
    const closed = await anon('POST', '/pair', { body: { client_name: 'laptop' } });
    expect([closed.status, closed.json]).toEqual([403, { error: 'pairing window is closed' }]);
    const win = await anon('POST', '/pair/window');
    expect(win.json).toEqual({ window_open: true, window_secs_left: 1, paired_clients: 0 });
    const paired = await anon('POST', '/pair', { body: { client_name: 'laptop' } });
    const token = (paired.json as { token: string }).token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await anon('GET', '/apps', { token })).status).toBe(200);
    expect((await anon('GET', '/pair/status')).json).toMatchObject({ paired_clients: 1 });
    expect((await anon('POST', '/pair', { body: {} })).status).toBe(400);
    await sleep(550);
    expect((await anon('GET', '/pair/status')).json).toMatchObject({
      window_open: false,
      window_secs_left: 0,
    });
    expect((await anon('POST', '/pair', { body: { client_name: 'other' } })).status).toBe(403);
    sim.openPairWindow();
    expect((await anon('POST', '/pair', { body: { client_name: 'other' } })).status).toBe(200);
    expect(JSON.stringify(sim.requests)).not.toContain(token);
    sim.revokeTokens(token);
    expect((await anon('GET', '/apps', { token })).status).toBe(403);
    sim.requirePairButton(true);
    expect((await anon('POST', '/pair/window', { body: {} })).status).toBe(403);
  });

  it('parses request bodies strictly and bounds them', async () => {
    const bad: Array<[Parameters<typeof call>[3], number]> = [
      [{ raw: '{"id":' }, 400],
      [{ raw: '["air-quality"]' }, 400],
      [{ raw: '{"id":"air-quality"}', contentType: 'text/plain' }, 415],
      [{ body: { id: 'air-quality', extra: 1 } }, 400],
      [{ body: { id: '../etc' } }, 400],
      [{ body: {} }, 400],
      [{ raw: Buffer.from([0x7b, 0xff, 0x7d]) }, 400],
      [{ raw: `{"id":"${'a'.repeat(70 * 1024)}"}` }, 413],
      [{ raw: `{"id":"${'a'.repeat(200 * 1024)}"}`, chunked: true }, 413],
      [{ raw: '{"id":"air-quality"}', chunked: true, contentType: 'application/json; charset=utf-8' }, 200],
    ];
    for (const [o, status] of bad) {
      const a = await api('POST', '/apps/install', o);
      expect(a.status).toBe(status);
      expect(a.json).toEqual(
        status === 200 ? expect.objectContaining({ id: 'air-quality' }) : { error: expect.any(String) },
      );
    }
    for (const q of ['lines=0', 'lines=10001', 'lines=abc', 'lines=-1']) {
      expect((await api('GET', `/apps/air-quality/logs?${q}`)).status).toBe(400);
    }
    expect((await api('POST', '/apps/air-quality/stop', { body: { x: 1 } })).status).toBe(400);
    expect(sim.installed().map((c) => c.id)).toEqual(['air-quality']);
  });
});
