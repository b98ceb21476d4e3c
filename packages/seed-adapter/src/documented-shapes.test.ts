// The client against the answers the Seed's public API documents give, verbatim where it gives them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJson, startTestServer, type TestSeedServer } from './client-fixture.js';
import { SeedClient } from './seed-client.js';

const TOKEN = 'seed_abcdefghijklmnopqrstuvwxyz0123456789ABCD';
let server: TestSeedServer;
let consoleAnswer: unknown = {};
let logsAnswer: unknown = {};

beforeAll(async () => {
  server = await startTestServer((_req, res, seen) => {
    const answers: Record<string, unknown> = {
      // SDK fixture status.json, wire-verified against seed v0.20.0 (no `firmware`).
      '/api/v1/status': {
        device_id: 'ad7d7e7b-56e7-4e03-b078-939209858144',
        uptime_secs: 5755,
        epoch: 20564,
        total_vectors: 8460,
        deleted_vectors: 0,
        file_size_bytes: 3260122,
        dimension: 8,
        paired: true,
        roles: ['custody', 'optimizer', 'delivery'],
        witness_chain_length: 20755,
      },
      // SDK identity.ts: {device_id, public_key?, firmware_version?, epoch?} (no `model`).
      '/api/v1/identity': {
        device_id: 'ad7d7e7b-56e7-4e03-b078-939209858144',
        public_key: 'ab'.repeat(32),
        firmware_version: '0.24.2',
        epoch: 20564,
      },
      '/api/v1/pair/status': {
        paired: true,
        client_count: 1,
        pairing_window_open: false,
        window_remaining_secs: 0,
      },
      '/api/v1/pair': { token: TOKEN, expires: null, permissions: ['read', 'write', 'admin'] },
      '/api/v1/apps/available': {
        version: '2.3.2',
        cogs: [
          { id: 'fall-detect', version: '1.0.0', sha256: '03'.repeat(32) },
          { id: 'baby-cry', version: '1.0.0' },
        ],
      },
      '/api/v1/apps': {
        installed: [{ id: 'fall-detect', version: '1.0.0', running: false, has_binary: true }],
        count: 1,
      },
      '/api/v1/apps/install': { status: 'already_installed' },
      '/api/v1/apps/fall-detect/start': { ok: true },
      '/api/v1/apps/fall-detect/logs?lines=5': logsAnswer,
      '/api/v1/apps/fall-detect/console': consoleAnswer,
      '/api/v1/apps/fall-detect/config': { interval: 1 },
      '/api/v1/apps/fall-detect/manifest': {
        cog: { id: 'fall-detect' },
        console: { allowed_commands: ['--once'] },
      },
    };
    const a = answers[seen.url];
    if (a === undefined) return sendJson(res, 404, { error: 'not found' });
    return sendJson(res, 200, a);
  });
});
afterAll(() => server.close());

const client = (): SeedClient => new SeedClient({ url: server.url, token: TOKEN, allowPlainHttp: true });

describe('SeedClient parses the documented answers', () => {
  it('status, identity and pair status as documented (no firmware, no model, documented pair names)', async () => {
    const c = client();
    expect(await c.status()).toMatchObject({
      device_id: 'ad7d7e7b-56e7-4e03-b078-939209858144',
      uptime_secs: 5755,
      epoch: 20564,
      paired: true,
      roles: ['custody', 'optimizer', 'delivery'],
      witness_chain_length: 20755,
    });
    expect(await c.identity()).toEqual({
      device_id: 'ad7d7e7b-56e7-4e03-b078-939209858144',
      public_key: 'ab'.repeat(32),
      firmware_version: '0.24.2',
      epoch: 20564,
    });
    expect(await c.pairStatus()).toEqual({
      paired: true,
      client_count: 1,
      pairing_window_open: false,
      window_remaining_secs: 0,
    });
    expect(await new SeedClient({ url: server.url, allowPlainHttp: true }).pair('heddle')).toBe(TOKEN);
  });

  it('the store, the installed list, install, start, config and manifest as documented', async () => {
    const c = client();
    expect(await c.available()).toEqual([
      { id: 'fall-detect', version: '1.0.0', sha256: '03'.repeat(32) },
      { id: 'baby-cry', version: '1.0.0' },
    ]);
    expect(await c.installed()).toEqual([{ id: 'fall-detect', version: '1.0.0', running: false }]);
    await c.install('fall-detect'); // 200 {status: already_installed}
    await c.start('fall-detect');
    expect(await c.getConfig('fall-detect')).toEqual({ interval: 1 });
    expect(await c.manifest('fall-detect')).toEqual({ allowedCommands: ['--once'] });
  });

  it('logs and console answers in every documented form', async () => {
    const c = client();
    logsAnswer = { output: ['{"status":"quiet"}'], errors: ['[cog-fall-detect] start'] };
    expect(await c.logs('fall-detect', 5)).toEqual({
      output: ['{"status":"quiet"}'],
      errors: ['[cog-fall-detect] start'],
    });
    logsAnswer = { output: 'a\nb' };
    expect(await c.logs('fall-detect', 5)).toEqual({ output: ['a', 'b'], errors: [] });
    consoleAnswer = { output: ['{"fall":false}'], exit_code: 0 }; // WEFT's mock: no errors field
    expect(await c.console('fall-detect', '--once')).toEqual({
      output: ['{"fall":false}'],
      errors: [],
      exit_code: 0,
    });
    consoleAnswer = { stdout: 'x', stderr: ['warn'], code: 2 };
    expect(await c.console('fall-detect', '--once')).toEqual({
      output: ['x'],
      errors: ['warn'],
      exit_code: 2,
    });
  });
});
