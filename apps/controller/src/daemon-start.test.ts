// startController in process: the revocation list fails closed and is re-read on a tick, a second
// controller on the same home is refused (the state database is held), and a stop removes api.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@heddle/cli-kit';
import { loadKeyFile } from '@heddle/envelope';
import { ApiClient, ApiError, certFingerprint, selfSignedCert } from '@heddle/operator-api';
import { describe, expect, it } from 'vitest';
import { CliError } from './cli-error.js';
import { loadControllerConfig } from './controller-config.js';
import { startController } from './daemon.js';
import { wasiPackage } from './daemon-fixtures.js';
import { dashboardDir } from './dashboard.js';
import { runCaptured, tempDir } from './test-io.js';

describe('startController', () => {
  it('fails closed on a bad revocation list, re-reads it on a tick; one controller per home', async () => {
    const cwd = tempDir();
    const home = join(cwd, 'h');
    expect((await runCaptured(['init', '--home', home, '--api-port', '0'], cwd)).code).toBe(0);
    writeFileSync(join(home, 'revocations.json'), '{"not":"a list"}');
    const lines: Record<string, unknown>[] = [];
    // cast: the logger writes one JSON object per line.
    const log = new Logger((l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    const config = loadControllerConfig(join(home, 'controller.json'));
    const running = await startController(config, log);
    try {
      expect(lines.map((l) => l.msg)).toContain(
        'the revocation list failed closed: every package is refused until a valid list is in place',
      );
      const client = ApiClient.fromHome(home);
      const pkg = await wasiPackage(loadKeyFile(join(home, 'controller.key')));
      const refused = await client.place({ package_dir: pkg.dir }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ code: 'package_invalid', message: expect.stringContaining('revo') });

      const second = await startController(config, new Logger(() => {})).catch((e: unknown) => e);
      expect(second).toBeInstanceOf(CliError);
      expect(second).toMatchObject({ field: 'state_db', exitCode: 3 });

      writeFileSync(
        join(home, 'revocations.json'),
        JSON.stringify({ schema: 'heddle.revocation-list.v1', generation: 0, entries: [] }),
      );
      await running.tick('test');
      expect(lines.map((l) => l.msg)).toContain('revocation list changed');
      const now = await client.place({ package_dir: pkg.dir }).catch((e: unknown) => e);
      expect(now).toMatchObject({ code: 'unplaceable' });
    } finally {
      await running.stop('test');
    }
    expect(existsSync(join(home, 'api.json'))).toBe(false);
    expect(lines.at(-1)?.msg).toBe('shutting down');
  });

  it('serves the plane event stream and the built dashboard', async () => {
    expect(dashboardDir(), 'the dashboard is not built: run the controller build first').toBeDefined();
    const cwd = tempDir();
    const home = join(cwd, 'h');
    expect((await runCaptured(['init', '--home', home, '--api-port', '0'], cwd)).code).toBe(0);
    const lines: Record<string, unknown>[] = [];
    // cast: the logger writes one JSON object per line.
    const log = new Logger((l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    const running = await startController(loadControllerConfig(join(home, 'controller.json')), log);
    try {
      expect(lines.find((l) => l.msg === 'listening')?.dashboard).toBe(`${running.url}/ui/`);
      const page = await fetch(`${running.url}/ui/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('app.js');
      const client = ApiClient.fromHome(home);
      const ctl = new AbortController();
      const seen: string[] = [];
      await client.followEvents({
        signal: ctl.signal,
        onEvent: (e) => {
          seen.push(e.type);
          ctl.abort();
        },
      });
      expect(seen).toEqual(['stream.open']);
    } finally {
      await running.stop('test');
    }
  });
});

describe('startController with api.remote', () => {
  it('serves the operator certificate given in controller.json, and a client pinning it gets through', async () => {
    const cwd = tempDir();
    const home = join(cwd, 'h');
    expect((await runCaptured(['init', '--home', home, '--api-port', '0'], cwd)).code).toBe(0);
    const made = selfSignedCert({ commonName: 'ctl.example', altIps: ['127.0.0.2'] });
    writeFileSync(join(home, 'own.crt'), made.cert);
    writeFileSync(join(home, 'own.key'), made.key, { mode: 0o600 });
    const path = join(home, 'controller.json');
    // cast: controller.json as init wrote it (the test adds api.remote).
    const file = JSON.parse(readFileSync(path, 'utf8')) as { api: Record<string, unknown> };
    file.api.remote = { host: '127.0.0.2', port: 0, tls_cert_file: 'own.crt', tls_key_file: 'own.key' };
    writeFileSync(path, JSON.stringify(file));
    const running = await startController(loadControllerConfig(path), new Logger(() => {}));
    try {
      expect(running.remote?.fingerprint).toBe(certFingerprint(made.cert));
      expect(running.remote?.url).toMatch(/^https:\/\/127\.0\.0\.2:\d+$/);
      expect(existsSync(join(home, 'api-tls.crt'))).toBe(false);
      const token = readFileSync(join(home, 'api.token'), 'utf8').trim();
      const client = new ApiClient({
        url: running.remote?.url ?? '',
        token,
        fingerprint: certFingerprint(made.cert),
      });
      expect(await client.whoami()).toEqual({ name: 'api.token', role: 'admin', via: 'token' });
    } finally {
      await running.stop('test');
    }
    // A certificate file that is not one stops the start, naming the field.
    writeFileSync(join(home, 'own.crt'), 'not a certificate');
    const bad = await startController(loadControllerConfig(path), new Logger(() => {})).catch(
      (e: unknown) => e,
    );
    expect(bad).toMatchObject({ code: 'tls_invalid', field: 'api.remote.tls_cert_file', exitCode: 3 });
  });
});

describe('startController with a bad operators.json', () => {
  it('does not start, naming the field of the file', async () => {
    const cwd = tempDir();
    const home = join(cwd, 'h');
    expect((await runCaptured(['init', '--home', home, '--api-port', '0'], cwd)).code).toBe(0);
    writeFileSync(
      join(home, 'operators.json'),
      JSON.stringify({
        schema: 'heddle.operators.v1',
        operators: [{ name: 'vera', role: 'root', added_at_ms: 1, public_key: 'ab'.repeat(32) }],
      }),
    );
    const bad = await startController(
      loadControllerConfig(join(home, 'controller.json')),
      new Logger(() => {}),
    ).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'operators_invalid', field: 'operators[0].role', exitCode: 3 });
    expect(existsSync(join(home, 'api.json'))).toBe(false);
  });
});
