import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { generateKeyPair, toHex } from '@heddle/envelope';
import { afterAll, describe, expect, it } from 'vitest';
import { runCaptured, tempDir } from './test-io.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fresh = (): string => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
const controllerKey = toHex(generateKeyPair().publicKey);

describe('heddle-host init', () => {
  it('creates a key (0600), a config, a trust file and a data dir, and prints the node id', async () => {
    const cwd = fresh();
    const r = await runCaptured(
      ['init', '--listen', '127.0.0.1:7411', '--controller', controllerKey, '--routes', 'wasi', '--json'],
      cwd,
    );
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { node_id: string; public_key: string; notes: string[] };
    expect(out.node_id).toMatch(/^[0-9a-f]{32}$/);
    expect(out.notes.join(' ')).toContain('pins no key');
    const dir = join(cwd, 'heddle-host');
    expect(statSync(join(dir, 'node.key')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o711);
    expect(statSync(join(dir, 'data')).isDirectory()).toBe(true);
    const config = JSON.parse(readFileSync(join(dir, 'heddle-host.json'), 'utf8'));
    expect(config).toMatchObject({
      schema: 'heddle.host.v1',
      listen: { host: '127.0.0.1', port: 7411 },
      controllers: [{ public_key: controllerKey }],
      routes: ['wasi'],
      tier: 'paired',
      key_file: 'node.key',
      trust_file: 'trust.json',
    });
    expect(JSON.parse(readFileSync(join(dir, 'trust.json'), 'utf8'))).toEqual({
      schema: 'heddle.trust.v1',
      keys: [],
    });
    const id = await runCaptured(['id', '--json'], cwd);
    expect(id.code, id.err).toBe(0);
    expect(JSON.parse(id.out)).toEqual({ node_id: out.node_id, public_key: out.public_key });
  });

  it('refuses to overwrite without --force, and replaces the key with it', async () => {
    const cwd = fresh();
    const first = await runCaptured(['init', '--dir', 'h', '--json'], cwd);
    expect(first.code).toBe(0);
    const again = await runCaptured(['init', '--dir', 'h'], cwd);
    expect(again.code).toBe(3);
    expect(again.err).toContain('--force');
    const forced = await runCaptured(['init', '--dir', 'h', '--force', '--json'], cwd);
    expect(forced.code, forced.err).toBe(0);
    expect(JSON.parse(forced.out).node_id).not.toBe(JSON.parse(first.out).node_id);
  });

  it('copies a given trust file and refuses a bad one', async () => {
    const cwd = fresh();
    const trust = {
      schema: 'heddle.trust.v1',
      keys: [{ id: 'op', role: 'operator', public_key: controllerKey }],
    };
    writeFileSync(join(cwd, 'trust.json'), JSON.stringify(trust));
    const r = await runCaptured(['init', '--trust', 'trust.json', '--json'], cwd);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).trust_anchors).toBe(1);
    writeFileSync(join(cwd, 'bad.json'), '{"schema":"heddle.trust.v1"}');
    const bad = await runCaptured(['init', '--dir', 'other', '--trust', 'bad.json'], cwd);
    expect(bad.code).toBe(3);
    expect(bad.err).toContain('trust_file');
  });

  it('refuses bad flags with a usage error', async () => {
    const cwd = fresh();
    for (const args of [
      ['--listen', 'nope'],
      ['--listen', '127.0.0.1:70000'],
      ['--routes', 'native,jvm'],
      ['--tier', 'root'],
      ['--controller', 'abc'],
      ['--bogus'],
    ]) {
      const r = await runCaptured(['init', ...args], cwd);
      expect(r.code, args.join(' ')).toBe(2);
    }
  });
});

describe('heddle-host run refuses a bad config, naming the field', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['bad port', { listen: { host: '127.0.0.1', port: 70_000 } }, 'listen.port'],
    ['unknown route', { routes: ['native', 'jvm'] }, 'routes[1]'],
    ['bad controller key', { controllers: [{ public_key: 'xyz' }] }, 'controllers[0].public_key'],
    ['unknown field', { listen_addr: 'x' }, '$'],
    ['bad tier', { tier: 'root' }, 'tier'],
    ['missing key file', { key_file: 'missing.key' }, 'key_file'],
    ['unreadable trust file', { trust_file: 'missing.json' }, 'trust_file'],
    ['unreadable policy', { policy_file: 'missing-policy.json' }, 'policy_file'],
    // Files that never end: each read stops at its limit instead of growing without bound.
    ['key file that never ends', { key_file: '/dev/zero' }, 'key_file'],
    ['trust file that never ends', { trust_file: '/dev/zero' }, 'trust_file'],
    ['policy that never ends', { policy_file: '/dev/zero' }, 'policy_file'],
  ];
  it.each(cases)('%s', async (_name, patch, field) => {
    const cwd = fresh();
    expect((await runCaptured(['init', '--listen', '127.0.0.1:0'], cwd)).code).toBe(0);
    const path = join(cwd, 'heddle-host', 'heddle-host.json');
    const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    Object.assign(config, patch);
    writeFileSync(path, JSON.stringify(config));
    const r = await runCaptured(['run', '--json'], cwd);
    expect(r.code).toBe(3);
    const err = JSON.parse(r.err) as { error: { field: string; message: string } };
    expect(err.error.field).toBe(field);
    expect(err.error.message).toContain(field === '$' ? 'listen_addr' : field);
    const logged = JSON.parse(r.out) as { level: string; msg: string; error_field: string };
    expect(logged).toMatchObject({ level: 'error', msg: 'refusing to start', error_field: field });
  });

  it('a --log-level that is not a level: usage error (exit 2) naming the flag, before the config is read', async () => {
    const r = await runCaptured(
      ['run', '--config', 'nowhere.json', '--log-level', 'trace', '--json'],
      fresh(),
    );
    expect(r.code).toBe(2);
    expect(JSON.parse(r.err)).toMatchObject({ error: { code: 'usage', field: 'log-level' } });
  });

  it('metrics_listen on an address in use: listen_failed naming metrics_listen', async () => {
    const cwd = fresh();
    expect((await runCaptured(['init', '--listen', '127.0.0.1:0'], cwd)).code).toBe(0);
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    // cast: a server listening on a TCP port has an AddressInfo address.
    const port = (blocker.address() as AddressInfo).port;
    try {
      const path = join(cwd, 'heddle-host', 'heddle-host.json');
      const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      writeFileSync(path, JSON.stringify({ ...config, metrics_listen: { host: '127.0.0.1', port } }));
      const r = await runCaptured(['run', '--json'], cwd);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.err)).toMatchObject({ error: { code: 'listen_failed', field: 'metrics_listen' } });
    } finally {
      blocker.close();
    }
  });

  it('a missing config file', async () => {
    const r = await runCaptured(['run', '--config', 'nowhere.json'], fresh());
    expect(r.code).toBe(3);
    expect(r.err).toContain('nowhere.json');
  });

  it('a config that never ends (/dev/zero) is refused at its 64 KiB limit, at once', async () => {
    const t = Date.now();
    const r = await runCaptured(['run', '--config', '/dev/zero', '--json'], fresh());
    expect(r.code).toBe(3);
    const err = JSON.parse(r.err) as { error: { code: string; message: string } };
    expect(err.error).toMatchObject({ code: 'config_unreadable' });
    expect(err.error.message).toContain('more than 65536 bytes');
    expect(Date.now() - t).toBeLessThan(5000);
  });

  it('a data_dir under /proc is refused at once (exit 3, naming data_dir) instead of spinning', async () => {
    const cwd = fresh();
    expect((await runCaptured(['init', '--listen', '127.0.0.1:0'], cwd)).code).toBe(0);
    const path = join(cwd, 'heddle-host', 'heddle-host.json');
    const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...config, data_dir: '/proc/self/heddle-data' }));
    const r = await runCaptured(['run', '--json'], cwd);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.err)).toMatchObject({ error: { code: 'data_dir', field: 'data_dir' } });
  });

  it('init into a directory under /proc fails at once with dir_unusable instead of spinning', async () => {
    const r = await runCaptured(['init', '--dir', '/proc/self/heddle-host', '--json'], fresh());
    expect(r.code).toBe(3);
    expect(JSON.parse(r.err)).toMatchObject({ error: { code: 'dir_unusable', field: 'dir' } });
  });
});
