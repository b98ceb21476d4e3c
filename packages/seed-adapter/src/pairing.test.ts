import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJson, startTestServer, type TestSeedServer } from './client-fixture.js';
import { loadToken } from './credentials.js';
import { SeedError } from './errors.js';
import { pairSeed, unpairSeed } from './pairing.js';
import { SeedClient } from './seed-client.js';
import { SeedSimulator } from './simulator/seed-simulator.js';
import { type SelfSignedCert, selfSignedCert } from './test-tls.js';

const ISSUED = 'issued-token_0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'seed-pair-'));
let cert: SelfSignedCert;
let server: TestSeedServer;
let windowOpen = false;
let buttonOnly = false;

beforeAll(async () => {
  cert = selfSignedCert('seed');
  server = await startTestServer((_req, res, seen) => {
    // The documented pair status (SDK ADR-0002): paired, client_count, pairing_window_open, window_remaining_secs.
    const status = {
      paired: true,
      client_count: 1,
      pairing_window_open: windowOpen,
      window_remaining_secs: windowOpen ? 30 : 0,
    };
    if (seen.url === '/api/v1/pair/status') return sendJson(res, 200, status);
    if (seen.url === '/api/v1/pair/window') {
      if (buttonOnly) return sendJson(res, 403, { error: 'press the button' });
      windowOpen = true;
      return sendJson(res, 200, {}); // the window's answer is not documented
    }
    if (seen.url === '/api/v1/pair') {
      if (!windowOpen) return sendJson(res, 403, { error: 'window closed' });
      expect(JSON.parse(seen.body)).toEqual({ client_name: 'heddle-test' });
      return sendJson(res, 200, { token: ISSUED, expires: null, permissions: ['read', 'write', 'admin'] });
    }
    sendJson(res, 404, { error: 'nope' });
  }, cert);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<SeedError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SeedError);
  expect((err as Error).message).not.toContain(ISSUED);
  return err as SeedError;
}

describe('pairSeed', () => {
  const client = (): SeedClient => new SeedClient({ url: server.url, spki: cert.spki });

  it('refuses when the window is closed and opening it was not asked', async () => {
    windowOpen = false;
    const tokenPath = join(dir, 'a', 'seed.token');
    expect((await refusal(pairSeed(client(), { clientName: 'heddle-test', tokenPath }))).code).toBe(
      'not_paired',
    );
    expect(() => statSync(tokenPath)).toThrow();
  });

  it('reports a Seed that opens windows only by its button as seed_error', async () => {
    windowOpen = false;
    buttonOnly = true;
    const tokenPath = join(dir, 'b', 'seed.token');
    const opts = { clientName: 'heddle-test', tokenPath, openWindow: true };
    expect((await refusal(pairSeed(client(), opts))).code).toBe('seed_error');
    buttonOnly = false;
  });

  it('opens a window, pairs, and saves the token owner-only without returning it', async () => {
    windowOpen = false;
    const tokenPath = join(dir, 'c', 'seed.token');
    const result = await pairSeed(client(), { clientName: 'heddle-test', tokenPath, openWindow: true });
    expect(result.paired).toBe(true);
    expect(JSON.stringify(result)).not.toContain(ISSUED);
    expect(statSync(tokenPath).mode & 0o777).toBe(0o600);
    expect(loadToken(tokenPath)).toBe(ISSUED);
    expect(server.requests.map((r) => r.url).slice(-4)).toEqual([
      '/api/v1/pair/status',
      '/api/v1/pair/window',
      '/api/v1/pair/status',
      '/api/v1/pair',
    ]);
    expect(unpairSeed(tokenPath)).toEqual({ removed: true });
    expect(unpairSeed(tokenPath)).toEqual({ removed: false });
    expect((await refusal(Promise.resolve().then(() => loadToken(tokenPath)))).code).toBe('credentials');
  });
});

describe('pairing answers as documented', () => {
  it('reads the token under pairing_token too (the Node SDK name)', async () => {
    const sim = await SeedSimulator.start({ pairWindowOpen: true });
    try {
      sim.setPairTokenField('pairing_token');
      const c = new SeedClient({ url: sim.url, allowPlainHttp: true });
      const tokenPath = join(dir, 'sdk', 'seed.token');
      await pairSeed(c, { clientName: 'heddle-test', tokenPath });
      await c.withToken(loadToken(tokenPath)).verifyToken();
    } finally {
      await sim.close();
    }
  });
});

describe('pairing against the simulator', () => {
  it('pairs over pinned HTTPS and the token passes a call the Seed authenticates', async () => {
    const sim = await SeedSimulator.start({ https: { cert: cert.cert, key: cert.key } });
    try {
      const c = new SeedClient({ url: sim.url, spki: cert.spki });
      expect((await refusal(c.verifyToken())).code).toBe('not_paired');
      const tokenPath = join(dir, 'sim', 'seed.token');
      await pairSeed(c, { clientName: 'heddle-test', tokenPath, openWindow: true });
      const token = loadToken(tokenPath);
      expect(token).toMatch(/^seed_/);
      const authed = c.withToken(token);
      await authed.verifyToken();
      expect(Array.isArray(await authed.installed())).toBe(true);
      expect((await authed.available()).length).toBeGreaterThan(0);
      const status = await authed.status();
      expect(status.device_id).toBe(sim.deviceId);
      expect(status.paired).toBe(true);
      const bad = await c
        .withToken('wrong-token-00000000')
        .verifyToken()
        .catch((e: unknown) => e);
      expect((bad as SeedError).code).toBe('not_paired');
      expect((bad as Error).message).not.toContain(token);
    } finally {
      await sim.close();
    }
  });
});
