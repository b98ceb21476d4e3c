// The simulator against the Seed's public API documents (docs/seed.md, "The simulator"), point by point (the section is named in each test).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SeedSimulator } from './seed-simulator.js';
import { call, sleep } from './sim-request.test-util.js';
import { DEFAULT_CONSOLE_COMMANDS, MAX_LOG_LINES, SYNTHETIC_WARNING } from './sim-types.js';

const TOKEN = 'tok-ABCdef0123456789-secret';
let sim: SeedSimulator;
const api = (method: string, path: string, o: Parameters<typeof call>[3] = {}) =>
  call(sim.url, method, `/api/v1${path}`, { token: TOKEN, ...o });
const anon = (method: string, path: string, o: Parameters<typeof call>[3] = {}) =>
  call(sim.url, method, `/api/v1${path}`, o);
const install = (id: string) => api('POST', '/apps/install', { body: { id } });

beforeEach(async () => {
  sim = await SeedSimulator.start({ tokens: [TOKEN], installDelayMs: 10, tickMs: 20 });
});
afterEach(async () => {
  await sim.close();
  // The token never shows in the request log, whatever the test did.
  expect(JSON.stringify(sim.requests)).not.toContain(TOKEN);
});

describe('§2 identity, status, pairing', () => {
  it('GET /status has the documented fields (device_id, uptime_secs, epoch, ..., paired, roles), no firmware', async () => {
    const s = await anon('GET', '/status');
    expect(s.status).toBe(200);
    expect(s.json).toMatchObject({
      device_id: sim.deviceId,
      uptime_secs: expect.any(Number),
      epoch: expect.any(Number),
      total_vectors: expect.any(Number),
      deleted_vectors: expect.any(Number),
      file_size_bytes: expect.any(Number),
      dimension: expect.any(Number),
      paired: true,
      roles: expect.any(Array),
      witness_chain_length: expect.any(Number),
    });
    expect(s.json).not.toHaveProperty('firmware');
    expect(sim.deviceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('GET /identity has device_id, public_key (hex), firmware_version, epoch; no model', async () => {
    const i = await anon('GET', '/identity');
    expect(i.json).toMatchObject({
      device_id: sim.deviceId,
      public_key: expect.stringMatching(/^[0-9a-f]{64}$/),
      firmware_version: expect.any(String),
      epoch: expect.any(Number),
    });
    expect(i.json).not.toHaveProperty('model');
  });

  it('GET /pair/status is {paired, client_count, pairing_window_open, window_remaining_secs}', async () => {
    expect((await anon('GET', '/pair/status')).json).toEqual({
      paired: true,
      client_count: 1,
      pairing_window_open: false,
      window_remaining_secs: 0,
    });
  });

  it('POST /pair returns the token under `token` while the window is open, 403 when closed', async () => {
    const closed = await anon('POST', '/pair', { body: { client_name: 'laptop' } });
    expect(closed.status).toBe(403);
    expect(closed.json).toEqual({ error: expect.any(String) });
    expect((await anon('POST', '/pair/window', { body: {} })).status).toBe(200);
    const st = (await anon('GET', '/pair/status')).json as Record<string, unknown>;
    expect(st.pairing_window_open).toBe(true);
    expect(st.window_remaining_secs).toBeGreaterThan(0);
    expect(st.window_remaining_secs).toBeLessThanOrEqual(30);
    const p = await anon('POST', '/pair', { body: { client_name: 'laptop' } });
    expect(p.status).toBe(200);
    expect(p.json).toMatchObject({ token: expect.stringMatching(/^seed_[A-Za-z0-9_-]{40}$/), expires: null });
    expect((await anon('GET', '/pair/status')).json).toMatchObject({ client_count: 2 });
  });

  it('one token per client: pairing the same client again replaces its token', async () => {
    sim.openPairWindow();
    const first = ((await anon('POST', '/pair', { body: { client_name: 'ctl' } })).json as { token: string })
      .token;
    expect(
      (await call(sim.url, 'POST', '/api/v1/apps/air-quality/stop', { token: first, body: {} })).status,
    ).toBe(404);
    const second = ((await anon('POST', '/pair', { body: { client_name: 'ctl' } })).json as { token: string })
      .token;
    expect(second).not.toBe(first);
    expect((await anon('GET', '/pair/status')).json).toMatchObject({ client_count: 2 });
    expect(
      (await call(sim.url, 'POST', '/api/v1/apps/air-quality/stop', { token: first, body: {} })).status,
    ).toBe(403);
    expect(
      (await call(sim.url, 'POST', '/api/v1/apps/air-quality/stop', { token: second, body: {} })).status,
    ).toBe(404);
  });

  it('DELETE /pair/{client_name} unpairs (with a token); the pairing answer can use pairing_token', async () => {
    sim.openPairWindow();
    sim.setPairTokenField('pairing_token');
    const a = (await anon('POST', '/pair', { body: { client_name: 'sdk' } })).json as Record<string, string>;
    expect(a.token).toBeUndefined();
    expect(a.pairing_token).toMatch(/^seed_/);
    expect((await anon('DELETE', '/pair/sdk')).status).toBe(403);
    expect((await api('DELETE', '/pair/sdk')).status).toBe(200);
    expect((await api('DELETE', '/pair/sdk')).status).toBe(404);
    expect(
      (await call(sim.url, 'POST', '/api/v1/apps/x/stop', { token: a.pairing_token, body: {} })).status,
    ).toBe(403);
  });

  it('POST /pair/window from a path that is not trusted needs a valid token (else 403)', async () => {
    sim.requirePairButton(true);
    expect((await anon('POST', '/pair/window', { body: {} })).status).toBe(403);
    expect((await api('POST', '/pair/window', { body: {} })).status).toBe(200);
  });
});

describe('§2 trust tiers: reads open, writes need the token', () => {
  it('serves /apps, /apps/available, logs, config and manifest without a token', async () => {
    await install('air-quality');
    for (const p of [
      '/apps',
      '/apps/available',
      '/apps/air-quality/logs?lines=5',
      '/apps/air-quality/config',
      '/apps/air-quality/manifest',
    ]) {
      expect([p, (await anon('GET', p)).status]).toEqual([p, 200]);
    }
  });

  it('refuses every write without a valid token: 403 {"error": "not paired..."}, nothing changed', async () => {
    const writes: Array<[string, string, unknown?]> = [
      ['POST', '/apps/install', { id: 'air-quality' }],
      ['POST', '/apps/air-quality/start', {}],
      ['POST', '/apps/air-quality/stop', {}],
      ['DELETE', '/apps/air-quality'],
      ['POST', '/apps/air-quality/console', { command: '--once' }],
      ['PUT', '/apps/air-quality/config', { interval: 2 }],
    ];
    for (const [m, p, body] of writes) {
      for (const token of [undefined, 'not-a-paired-token']) {
        const a = await anon(m, p, {
          ...(token === undefined ? {} : { token }),
          ...(body === undefined ? {} : { body }),
        });
        expect([m, p, a.status]).toEqual([m, p, 403]);
        expect((a.json as { error: string }).error).toMatch(/not paired/);
        expect(a.text).not.toContain('not-a-paired-token');
      }
    }
    expect(sim.installed()).toEqual([]);
  });

  it('accepts the token as X-Pairing-Token too', async () => {
    const a = await anon('POST', '/apps/install', {
      headers: { 'x-pairing-token': TOKEN },
      body: { id: 'thermal' },
    });
    expect(a.status).toBe(200);
    expect(sim.requests.at(-1)?.token).toBe(true);
  });

  it('401 instead of 403, and token-only reads (the WiFi path), are knobs', async () => {
    const s = await SeedSimulator.start({ unauthorizedStatus: 401, readsNeedToken: true });
    try {
      expect((await call(s.url, 'POST', '/api/v1/apps/install', { body: { id: 'thermal' } })).status).toBe(
        401,
      );
      expect((await call(s.url, 'GET', '/api/v1/apps/thermal/logs')).status).toBe(401);
      expect((await call(s.url, 'GET', '/api/v1/apps')).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('answers errors as {error}, with CORS *, and 404/405 for unknown routes and methods', async () => {
    for (const [m, p, status] of [
      ['GET', '/nope', 404],
      ['GET', '/api/v2/status', 404],
      ['POST', '/api/v1/status', 405],
      ['GET', '/api/v1/apps/install', 405],
      ['POST', '/api/v1/apps/air-quality/reboot', 404],
      ['GET', '/api/v1/apps/Bad%20Id/logs', 400],
    ] as const) {
      const a = await call(sim.url, m, p, { token: TOKEN });
      expect([m, p, a.status]).toEqual([m, p, status]);
      expect(a.json).toEqual({ error: expect.any(String) });
      expect(a.headers['access-control-allow-origin']).toBe('*');
    }
  });
});

describe('§1 apps', () => {
  it('GET /apps/available is {version, cogs: [{id, version, sha256, size}]}', async () => {
    const a = (await anon('GET', '/apps/available')).json as { version: string; cogs: unknown[] };
    expect(a.version).toEqual(expect.any(String));
    expect(a.cogs[0]).toEqual({
      id: expect.any(String),
      version: expect.any(String),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      size: expect.any(Number),
    });
  });

  it('install {id} answers {status: installed}, auto-starts; GET /apps is {installed: [{id, version, running, pid, has_binary}], count}', async () => {
    const a = await install('air-quality');
    expect(a.json).toEqual({ status: 'installed' });
    const list = (await anon('GET', '/apps')).json as {
      installed: Array<Record<string, unknown>>;
      count: number;
    };
    expect(list.count).toBe(1);
    expect(list.installed[0]).toEqual({
      id: 'air-quality',
      version: '1.2.0',
      running: true,
      pid: expect.any(Number),
      has_binary: true,
    });
  });

  it('installing an installed cog answers 200 {status: already_installed}', async () => {
    await install('air-quality');
    const again = await install('air-quality');
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ status: 'already_installed' });
    expect(sim.installed()).toHaveLength(1);
  });

  it('install of an id the store does not list is 404 "cog not found in registry or binary missing"', async () => {
    const a = await install('no-such-cog');
    expect(a.status).toBe(404);
    expect(a.json).toEqual({ error: 'cog not found in registry or binary missing' });
  });

  it('install takes an optional config, checked against the manifest', async () => {
    const a = await api('POST', '/apps/install', { body: { id: 'thermal', config: { interval: 9 } } });
    expect(a.json).toEqual({ status: 'installed' });
    expect((await anon('GET', '/apps/thermal/config')).json).toEqual({ interval: 9 });
  });

  it('start answers a pid, stop answers ok; at most 3 run (cap refusal: 409 by default)', async () => {
    for (const id of ['air-quality', 'vibration', 'presence']) await install(id);
    const over = await install('thermal');
    expect(over.status).toBe(409);
    expect((over.json as { error: string }).error).toMatch(/max 3 concurrent active cogs/);
    expect((await api('POST', '/apps/presence/stop', { body: {} })).json).toEqual({ ok: true });
    expect(await install('thermal').then((r) => r.status)).toBe(200);
    expect((await api('POST', '/apps/presence/start', { body: {} })).status).toBe(409);
    await api('POST', '/apps/thermal/stop', { body: {} });
    expect((await api('POST', '/apps/presence/start', { body: {} })).json).toEqual({
      ok: true,
      pid: expect.any(Number),
    });
    expect((await api('POST', '/apps/nope/start', { body: {} })).status).toBe(404);
  });

  it('DELETE uninstalls, and the cog loses its local config', async () => {
    await api('POST', '/apps/install', { body: { id: 'thermal', config: { interval: 7 } } });
    expect((await api('DELETE', '/apps/thermal')).status).toBe(200);
    expect(sim.installed()).toEqual([]);
    await install('thermal');
    expect((await anon('GET', '/apps/thermal/config')).json).toEqual({});
  });

  it('logs are {output, errors} (stdout JSON lines, stderr), at most 1000 lines each', async () => {
    const s = await SeedSimulator.start({ tokens: [TOKEN], installDelayMs: 0, tickMs: 1 });
    try {
      await call(s.url, 'POST', '/api/v1/apps/install', { token: TOKEN, body: { id: 'thermal' } });
      await sleep(50);
      const few = (await call(s.url, 'GET', '/api/v1/apps/thermal/logs?lines=3')).json as {
        output: string[];
        errors: string[];
      };
      expect(few.output).toHaveLength(3);
      expect(JSON.parse(few.output[0] ?? '')).toMatchObject({ cog: 'thermal', reading: expect.any(Number) });
      expect(few.errors).toEqual(['[cog-thermal] start']);
      while (
        ((await call(s.url, 'GET', '/api/v1/apps/thermal/logs?lines=5000')).json as { output: string[] })
          .output.length < MAX_LOG_LINES
      ) {
        await sleep(50);
      }
      await sleep(30);
      const all = (await call(s.url, 'GET', '/api/v1/apps/thermal/logs?lines=5000')).json as {
        output: string[];
      };
      expect(all.output).toHaveLength(MAX_LOG_LINES);
    } finally {
      await s.close();
    }
  });

  it('config starts {} and PUT merges, checked against the manifest [config] (type, min/max, unknown key)', async () => {
    await install('thermal');
    expect((await anon('GET', '/apps/thermal/config')).json).toEqual({});
    expect((await api('PUT', '/apps/thermal/config', { body: { interval: 3 } })).status).toBe(200);
    expect((await api('PUT', '/apps/thermal/config', { body: { sensor_source: 'synthetic' } })).status).toBe(
      200,
    );
    expect((await anon('GET', '/apps/thermal/config')).json).toEqual({
      interval: 3,
      sensor_source: 'synthetic',
    });
    for (const bad of [
      { interval: 0 },
      { interval: 1.5 },
      { interval: 'x' },
      { sensor_source: 'wifi' },
      { nope: 1 },
    ]) {
      const r = await api('PUT', '/apps/thermal/config', { body: bad });
      expect([bad, r.status]).toEqual([bad, 400]);
      expect(r.json).toEqual({ error: expect.any(String) });
    }
    expect((await anon('GET', '/apps/thermal/config')).json).toEqual({
      interval: 3,
      sensor_source: 'synthetic',
    });
  });

  it('GET /apps/{id}/manifest is cog.toml as JSON, with [console].allowed_commands', async () => {
    await install('thermal');
    expect((await anon('GET', '/apps/thermal/manifest')).json).toMatchObject({
      cog: { id: 'thermal', version: '1.0.3', binary: 'cog-thermal-arm' },
      console: {
        allowed_commands: [...DEFAULT_CONSOLE_COMMANDS],
        max_runtime_secs: 15,
        output_limit_bytes: 65_536,
      },
      config: { interval: { type: 'integer' } },
    });
    expect((await anon('GET', '/apps/air-quality/manifest')).status).toBe(404);
  });
});

describe('§1 console and §3 the sensor feed', () => {
  it('runs one cycle of an allowed command on the sensor feed when no cog runs', async () => {
    await install('thermal');
    await api('POST', '/apps/thermal/stop', { body: {} });
    const r = await api('POST', '/apps/thermal/console', { body: { command: '--once' } });
    expect(r.status).toBe(200);
    const body = r.json as { output: string[]; errors: string[]; exit_code: number };
    expect(body.exit_code).toBe(0);
    expect(body.errors).toEqual([]);
    expect(JSON.parse(body.output[0] ?? '')).toMatchObject({ cog: 'thermal', source: 'csi' });
  });

  it('refuses a command outside the manifest allowed_commands (400)', async () => {
    await install('thermal');
    const r = await api('POST', '/apps/thermal/console', { body: { command: 'calibrate' } });
    expect(r.status).toBe(400);
    expect((r.json as { error: string }).error).toMatch(/allowed_commands/);
  });

  it('a run whose feed is taken is no error: it runs on synthetic data and says so on its errors', async () => {
    await install('thermal');
    await install('presence'); // runs, holds UDP 5006
    await api('POST', '/apps/thermal/stop', { body: {} });
    const r = await api('POST', '/apps/thermal/console', { body: { command: '--once' } });
    expect(r.status).toBe(200);
    const body = r.json as { output: string[]; errors: string[]; exit_code: number };
    expect(body.exit_code).toBe(0);
    expect(body.errors).toEqual([SYNTHETIC_WARNING]);
    expect(JSON.parse(body.output[0] ?? '')).toMatchObject({ source: 'synthetic' });
  });

  it('--help prints usage; failNextConsole exits 1 once', async () => {
    await install('thermal');
    await api('POST', '/apps/thermal/stop', { body: {} });
    const h = (await api('POST', '/apps/thermal/console', { body: { command: '--help' } })).json as {
      output: string[];
    };
    expect(h.output[0]).toMatch(/^usage: cog-thermal-arm/);
    sim.failNextConsole('boom');
    expect((await api('POST', '/apps/thermal/console', { body: { command: '--once' } })).json).toMatchObject({
      exit_code: 1,
      errors: ['[cog-thermal] boom'],
    });
    expect((await api('POST', '/apps/thermal/console', { body: { command: '--once' } })).json).toMatchObject({
      exit_code: 0,
    });
  });
});

describe('§3 HTTP behaviour', () => {
  it('refuses bodies over 64 KB (413) and bodies that are not JSON objects (400/415)', async () => {
    expect(
      (await api('POST', '/apps/install', { raw: JSON.stringify({ id: 'x'.repeat(70_000) }) })).status,
    ).toBe(413);
    expect((await api('POST', '/apps/install', { raw: '{"id":' })).status).toBe(400);
    expect((await api('POST', '/apps/install', { raw: '[1]' })).status).toBe(400);
    expect((await api('POST', '/apps/install', { raw: 'id=x', contentType: 'text/plain' })).status).toBe(415);
  });
});

describe('knobs for the documented failure modes', () => {
  it('holdFeed: the feed held outside the cogs makes every console run synthetic', async () => {
    await install('thermal');
    await api('POST', '/apps/thermal/stop', { body: {} });
    sim.holdFeed(true);
    const r = (await api('POST', '/apps/thermal/console', { body: { command: '--once' } })).json as {
      errors: string[];
    };
    expect(r.errors).toEqual([SYNTHETIC_WARNING]);
  });

  it('vanishAfterNextConsole: the answer arrives, then the Seed is gone', async () => {
    await install('thermal');
    await api('POST', '/apps/thermal/stop', { body: {} });
    sim.vanishAfterNextConsole();
    expect((await api('POST', '/apps/thermal/console', { body: { command: '--once' } })).status).toBe(200);
    await sleep(20);
    await expect(anon('GET', '/status')).rejects.toThrow(/ECONNREFUSED/);
  });
});
