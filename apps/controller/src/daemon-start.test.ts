// startController in process: the revocation list fails closed and is re-read on a tick, a second
// controller on the same home is refused (the state database is held), and a stop removes api.json.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@heddle/cli-kit';
import { loadKeyFile } from '@heddle/envelope';
import { ApiClient, ApiError } from '@heddle/operator-api';
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
