import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SeedSimulator } from '@heddle/seed-adapter/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCaptured, tempDir } from './test-io.js';
import { httpsSimulator, ProfileRunner } from './test-seed.js';

let a: SeedSimulator;
let b: SeedSimulator;
let plain: SeedSimulator;

beforeAll(async () => {
  [a, b, plain] = await Promise.all([
    httpsSimulator(),
    httpsSimulator(),
    SeedSimulator.start({ installDelayMs: 50, tickMs: 50 }),
  ]);
});
afterAll(async () => {
  await Promise.all([a.close(), b.close(), plain.close()]);
});

describe('heddle-seed: trust and secrets', () => {
  it('refuses a Seed whose certificate key is not the pinned one (tls_pin), and sends it nothing', async () => {
    const p = new ProfileRunner(join(tempDir(), 'seed'));
    // init checks the pin at once: a's key given for b's address is refused, nothing written.
    b.clearRequests();
    const wrongPin = await p.json(1, 'init', '--url', b.url, '--pin-spki', a.spki ?? '');
    expect(wrongPin.code).toBe('tls_pin');
    expect(wrongPin.spki).toBe(b.spki);
    expect(existsSync(join(p.home, 'seed.json'))).toBe(false);
    expect(b.requests).toEqual([]);
    // The profile pins a's key; later the Seed's address answers with b's certificate (a swap).
    expect((await p.json(0, 'init', '--url', a.url, '--pin-spki', a.spki ?? '')).url).toBe(a.url);
    const profile = join(p.home, 'seed.json');
    writeFileSync(profile, readFileSync(profile, 'utf8').replace(a.url, b.url));
    const r = await p.json(1, 'status');
    expect(r.code).toBe('tls_pin');
    expect(b.requests).toEqual([]);
    const human = await p.run('pair', '--open-window');
    expect(human.code).toBe(1);
    expect(existsSync(join(p.home, 'token'))).toBe(false);
  });

  it('plain http only with --allow-plain-http, on loopback; the token is redacted from every output', async () => {
    const p = new ProfileRunner(join(tempDir(), 'seed'));
    expect((await p.json(3, 'init', '--url', plain.url)).code).toBe('insecure');
    expect((await p.json(3, 'init', '--url', 'http://192.0.2.7', '--allow-plain-http')).code).toBe(
      'insecure',
    );
    expect((await p.json(0, 'init', '--url', plain.url, '--allow-plain-http')).spki).toBeNull();
    // A closed pairing window is refused unless --open-window.
    expect((await p.json(1, 'pair')).code).toBe('not_paired');
    expect((await p.json(0, 'pair', '--open-window', '--client-name', 'ops laptop')).client_name).toBe(
      'ops laptop',
    );
    const token = p.token();
    expect((await p.json(0, 'pin', 'add', 'thermal@1.0.3')).pinned).toMatchObject({ id: 'thermal' });
    expect((await p.json(0, 'run', 'thermal@1.0.3', '--no-start')).state).toBe('stopped');
    expect((await p.json(0, 'start', 'thermal')).state).toBe('running');
    // Every command, human and --json, on success and failure.
    const argvs = [
      ['status'],
      ['store'],
      ['ls'],
      ['pin', 'ls'],
      ['logs', 'thermal'],
      ['config', 'get', 'thermal'],
      ['stop', 'thermal'],
      ['start', 'thermal'],
      ['console', 'thermal', 'nope'],
      ['run', 'nope@1.0.0'],
      ['rm', 'thermal'],
      ['rm', 'thermal'],
    ];
    for (const argv of argvs) {
      await p.run(...argv);
      const j = await p.run(...argv, '--json');
      JSON.parse(j.code === 0 ? j.out : j.err);
    }
    p.assertNeverPrinted(token);
    expect(plain.installed()).toEqual([]);
  });

  it('usage errors exit 2, bad input exits 3', async () => {
    const home = join(tempDir(), 'seed');
    expect((await runCaptured(['frob'], home)).code).toBe(2);
    expect((await runCaptured(['run', '--home', home], home)).code).toBe(2);
    expect((await runCaptured(['logs', 'x', '--bogus', '--home', home], home)).code).toBe(2);
    expect((await runCaptured(['status', '--home', home], home)).code).toBe(3);
    expect((await runCaptured(['pin', 'add', 'Bad!@1', '--home', home], home)).code).toBe(3);
    expect((await runCaptured(['init', '--url', 'ftp://x', '--home', home], home)).code).toBe(3);
    const help = await runCaptured(['help'], home);
    expect(help.code).toBe(0);
    expect(help.out).toContain('console');
  });
});

describe('heddle-seed simulator', () => {
  it('runs until interrupted, printing url, spki and the labelled simulator test token', async () => {
    const { runCli } = await import('./cli.js');
    const out: string[] = [];
    const ctl = new AbortController();
    const done = runCli(['simulator', '--https', '--json'], {
      out: (l) => {
        out.push(l);
        ctl.abort();
      },
      err: (l) => out.push(l),
      cwd: tempDir(),
      env: {},
      signal: ctl.signal,
    });
    expect(await done).toBe(0);
    const v = JSON.parse(out[0] ?? '{}') as Record<string, string>;
    expect(v.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(v.spki).toMatch(/^[0-9a-f]{64}$/);
    expect(v.simulator_test_token?.length).toBeGreaterThanOrEqual(8);
    expect(v.init).toContain('--pin-spki');
  });
});
