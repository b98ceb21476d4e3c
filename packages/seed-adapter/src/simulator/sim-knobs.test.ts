import { afterEach, describe, expect, it } from 'vitest';
import { SeedError } from '../errors.js';
import { selfSignedCert, spkiOfPem } from '../test-tls.js';
import { SeedSimulator } from './seed-simulator.js';
import { parseSimulatorArgs, runSimulatorFromArgv } from './sim-cli.js';
import { HUGE_BYTES } from './sim-http.js';
import { call, sleep } from './sim-request.test-util.js';
import { storeCog } from './sim-types.js';

const TOKEN = 'knob-token-0123456789abcdef';
const sims: SeedSimulator[] = [];
async function start(o: Parameters<typeof SeedSimulator.start>[0] = {}): Promise<SeedSimulator> {
  const s = await SeedSimulator.start({ tokens: [TOKEN], installDelayMs: 10, ...o });
  sims.push(s);
  return s;
}
const api = (s: SeedSimulator, method: string, path: string, o: Parameters<typeof call>[3] = {}) =>
  call(s.url, method, `/api/v1${path}`, { token: TOKEN, ...(s.spki ? { pin: s.spki } : {}), ...o });

afterEach(async () => {
  for (const s of sims.splice(0)) {
    await s.close();
    expect(JSON.stringify(s.requests)).not.toContain(TOKEN);
  }
});

describe('SeedSimulator over HTTPS', () => {
  it('serves with a self-signed certificate whose SPKI pin checks by hand', async () => {
    const tls = selfSignedCert('seed-test');
    expect(tls.spki).toMatch(/^[0-9a-f]{64}$/);
    expect(spkiOfPem(tls.cert)).toBe(tls.spki);
    const s = await start({ https: tls });
    expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(s.spki).toBe(tls.spki);
    expect((await api(s, 'GET', '/status')).status).toBe(200);
    expect((await api(s, 'POST', '/apps/install', { body: { id: 'presence' } })).json).toEqual({
      status: 'installed',
    });
    expect((await api(s, 'POST', '/apps/presence/stop', { token: undefined, body: {} })).status).toBe(403);
    const other = selfSignedCert('seed');
    expect(other.spki).not.toBe(tls.spki);
    await expect(api(s, 'GET', '/status', { pin: other.spki })).rejects.toThrow(/spki mismatch/);
  });

  it('refuses a bad common name', () => {
    expect(() => selfSignedCert('a/CN=evil')).toThrow(SeedError);
  });
});

describe('SeedSimulator knobs', () => {
  it('drifts the store version; an install takes what the store lists now', async () => {
    const s = await start();
    s.setCatalog([storeCog('air-quality', '1.3.0')]);
    expect((await api(s, 'GET', '/apps/available')).json).toMatchObject({
      cogs: [storeCog('air-quality', '1.3.0')],
    });
    expect((await api(s, 'POST', '/apps/install', { body: { id: 'air-quality' } })).status).toBe(200);
    expect(s.installed()).toMatchObject([{ id: 'air-quality', version: '1.3.0' }]);
    expect((await api(s, 'POST', '/apps/install', { body: { id: 'vibration' } })).status).toBe(404);
  });

  it('is slow to install, stays responsive meanwhile, and installs the drifted version', async () => {
    const s = await start();
    s.setInstallDelay(300);
    const t0 = Date.now();
    const pending = api(s, 'POST', '/apps/install', { body: { id: 'vibration' } });
    await sleep(50);
    expect((await api(s, 'GET', '/apps')).json).toEqual({ installed: [], count: 0 });
    s.setCatalog([storeCog('vibration', '0.5.0')]);
    const done = await pending;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(done.json).toEqual({ status: 'installed' });
    expect(s.installed()).toMatchObject([{ id: 'vibration', version: '0.5.0', running: true }]);
  });

  it('fails the next install only, installing nothing', async () => {
    const s = await start();
    s.failNextInstall('flash write failed');
    const failed = await api(s, 'POST', '/apps/install', { body: { id: 'presence' } });
    expect([failed.status, failed.json]).toEqual([500, { error: 'flash write failed' }]);
    expect(s.installed()).toEqual([]);
    expect((await api(s, 'POST', '/apps/install', { body: { id: 'presence' } })).status).toBe(200);
  });

  it('installs without answering (connection destroyed), then reads back installed', async () => {
    const s = await start();
    s.installWithoutAnswer();
    await expect(api(s, 'POST', '/apps/install', { body: { id: 'air-quality' } })).rejects.toThrow(
      /socket hang up|ECONNRESET/,
    );
    expect((await api(s, 'GET', '/apps')).json).toMatchObject({
      installed: [{ id: 'air-quality', version: '1.2.0', running: true }],
    });
    expect(s.requests.find((r) => r.path === '/api/v1/apps/install')?.status).toBeUndefined();
    expect((await api(s, 'POST', '/apps/install', { body: { id: 'vibration' } })).status).toBe(200);
  });

  it('installs without answering (hang) until the client gives up', async () => {
    const s = await start();
    s.installWithoutAnswer('hang');
    await expect(
      api(s, 'POST', '/apps/install', { body: { id: 'presence' }, timeoutMs: 300 }),
    ).rejects.toThrow(/client timeout/);
    expect(s.installed().map((c) => [c.id, c.running])).toEqual([['presence', true]]);
  });

  it('answers garbage and huge bodies on chosen paths, and keeps serving', async () => {
    const s = await start();
    s.garbageOn('/api/v1/status');
    const g = await api(s, 'GET', '/status');
    expect(g.status).toBe(200);
    expect(g.json).toBeUndefined();
    s.hugeOn('/api/v1/apps');
    const full = await api(s, 'GET', '/apps');
    expect(full.bytes).toBeGreaterThanOrEqual(HUGE_BYTES);
    expect(full.headers['content-length']).toBeUndefined();
    const cut = await api(s, 'GET', '/apps', { maxBytes: 1024 * 1024 });
    expect(cut.bytes).toBeLessThan(2 * 1024 * 1024);
    s.clearFaults();
    expect((await api(s, 'GET', '/status')).json).toMatchObject({ device_id: s.deviceId });
    expect((await api(s, 'GET', '/apps')).json).toEqual({ installed: [], count: 0 });
  });

  it('applies the cap from options and pre-opens the pair window', async () => {
    const s = await start({ concurrencyCap: 1, pairWindowOpen: true });
    expect((await api(s, 'GET', '/pair/status')).json).toMatchObject({ pairing_window_open: true });
    await api(s, 'POST', '/apps/install', { body: { id: 'presence' } });
    expect((await api(s, 'POST', '/apps/install', { body: { id: 'vibration' } })).status).toBe(409);
    await expect(SeedSimulator.start({ concurrencyCap: 0 })).rejects.toThrow(SeedError);
  });
});

describe('runSimulatorFromArgv', () => {
  it('starts an HTTPS simulator and prints its URL, pin and a pre-paired token', async () => {
    const lines: string[] = [];
    const { simulator, token } = await runSimulatorFromArgv(['--https', '--port', '0'], (l) => lines.push(l));
    sims.push(simulator);
    expect(lines).toEqual([`url: ${simulator.url}`, `spki: ${simulator.spki}`, `token: ${token}`]);
    const a = await call(simulator.url, 'POST', '/api/v1/apps/install', {
      token,
      pin: simulator.spki ?? '',
      body: { id: 'thermal' },
    });
    expect(a.json).toEqual({ status: 'installed' });
  });

  it('parses its arguments strictly', () => {
    expect(parseSimulatorArgs([])).toEqual({
      https: false,
      port: 0,
      host: '127.0.0.1',
      pairWindowOpen: false,
    });
    expect(parseSimulatorArgs(['--port', '8443', '--pair-window'])).toMatchObject({ port: 8443 });
    for (const bad of [['--port'], ['--port', '70000'], ['--port', 'x'], ['--bogus']]) {
      expect(() => parseSimulatorArgs(bad)).toThrow(SeedError);
    }
  });
});

describe('installWithoutAnswer early', () => {
  it('drops the connection at once; the install completes after its delay', async () => {
    const s = await start();
    s.setInstallDelay(150);
    s.installWithoutAnswer('early');
    await expect(api(s, 'POST', '/apps/install', { body: { id: 'thermal' } })).rejects.toThrow(
      /socket hang up|ECONNRESET/,
    );
    expect(s.installed()).toEqual([]);
    await sleep(250);
    expect(s.installed().map((c) => c.id)).toEqual(['thermal']);
  });
});
