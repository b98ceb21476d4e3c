// `heddle init` (files and modes, refusal to overwrite, given trust and policy) and `heddle controller
// run` refusing a bad controller.json naming the field, all in process.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, loadKeyFile, nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { DEFAULT_POLICY } from '@heddle/gate';
import { loadTrustFile } from '@heddle/package';
import { describe, expect, it } from 'vitest';
import { homeDir } from '../home.js';
import { runCaptured, tempDir } from '../test-io.js';

const mode = (p: string): number => statSync(p).mode & 0o777;

describe('heddle init', () => {
  it('creates the home (0700), the key and token (0600), config, trust naming the key as operator, default policy', async () => {
    const cwd = tempDir();
    const r = await runCaptured(['init', '--home', 'ctl', '--json'], cwd);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { node_id: string; public_key: string; home: string };
    const home = join(cwd, 'ctl');
    expect(out.home).toBe(home);
    expect(mode(home)).toBe(0o700);
    expect(mode(join(home, 'controller.key'))).toBe(0o600);
    expect(mode(join(home, 'api.token'))).toBe(0o600);
    expect(readFileSync(join(home, 'api.token'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    const keys = loadKeyFile(join(home, 'controller.key'));
    expect(out.public_key).toBe(toHex(keys.publicKey));
    expect(out.node_id).toBe(nodeIdFromPublicKey(keys.publicKey));
    expect(loadTrustFile(join(home, 'trust.json')).operatorKeys()).toEqual([out.public_key]);
    expect(JSON.parse(readFileSync(join(home, 'policy.json'), 'utf8'))).toEqual(DEFAULT_POLICY);
    const config = JSON.parse(readFileSync(join(home, 'controller.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({
      schema: 'heddle.controller.v1',
      api: { host: '127.0.0.1', port: 7070 },
      key_file: 'controller.key',
      state_db: 'state.db',
      refresh_secs: 10,
    });

    const key = readFileSync(join(home, 'controller.key'), 'utf8');
    const human = await runCaptured(['init', '--home', 'ctl'], cwd);
    expect(human.code).toBe(3);
    expect(human.err).toContain('--force');
    expect(readFileSync(join(home, 'controller.key'), 'utf8')).toBe(key);
    const forced = await runCaptured(['init', '--home', 'ctl', '--force', '--api-port', '0'], cwd);
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toContain(`public key  ${toHex(loadKeyFile(join(home, 'controller.key')).publicKey)}`);
    expect(forced.out).not.toContain(out.public_key);
  });

  it('copies a given trust file and policy after checking them; refuses bad ones and a bad port', async () => {
    const cwd = tempDir();
    const op = toHex(generateKeyPair().publicKey);
    writeFileSync(
      join(cwd, 'trust.json'),
      JSON.stringify({ schema: 'heddle.trust.v1', keys: [{ id: 'ops', role: 'operator', public_key: op }] }),
    );
    const policy = { ...DEFAULT_POLICY, name: 'mine' };
    writeFileSync(join(cwd, 'policy.json'), JSON.stringify(policy));
    const r = await runCaptured(
      ['init', '--home', 'h', '--trust', 'trust.json', '--policy', 'policy.json'],
      cwd,
    );
    expect(r.code, r.err).toBe(0);
    expect(loadTrustFile(join(cwd, 'h', 'trust.json')).operatorKeys()).toEqual([op]);
    expect(JSON.parse(readFileSync(join(cwd, 'h', 'policy.json'), 'utf8'))).toMatchObject({ name: 'mine' });

    writeFileSync(join(cwd, 'bad.json'), '{"schema":"heddle.trust.v1","keys":[{"id":"x"}]}');
    const bad = await runCaptured(['init', '--home', 'h2', '--trust', 'bad.json', '--json'], cwd);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.err)).toMatchObject({ error: { code: 'trust_invalid', field: 'trust' } });
    const port = await runCaptured(['init', '--home', 'h3', '--api-port', '70000'], cwd);
    expect(port.code).toBe(2);
    expect(port.err).toContain('--api-port');
  });

  it('resolves the home from --home, then $HEDDLE_HOME, then ~/.heddle', () => {
    expect(homeDir('x', { cwd: '/a' }, { HEDDLE_HOME: '/e' })).toBe('/a/x');
    expect(homeDir(undefined, { cwd: '/a' }, { HEDDLE_HOME: '/e' })).toBe('/e');
    expect(homeDir(undefined, { cwd: '/a' }, {})).toMatch(/\.heddle$/);
  });
});

describe('heddle controller run: a bad controller.json', () => {
  it.each([
    ['api.host', (c: Record<string, unknown>) => ({ ...c, api: { host: '0.0.0.0', port: 0 } })],
    ['api.port', (c: Record<string, unknown>) => ({ ...c, api: { host: '127.0.0.1', port: 'x' } })],
    ['refresh_secs', (c: Record<string, unknown>) => ({ ...c, refresh_secs: 0 })],
    ['state_db', (c: Record<string, unknown>) => ({ ...c, state_db: undefined })],
    ['extra', (c: Record<string, unknown>) => ({ ...c, extra: 1 })],
  ])('is refused before anything listens, naming %s (exit 3)', async (field, change) => {
    const cwd = tempDir();
    expect((await runCaptured(['init', '--home', 'h', '--api-port', '0'], cwd)).code).toBe(0);
    const path = join(cwd, 'h', 'controller.json');
    const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify(change(config)));
    const r = await runCaptured(['controller', 'run', '--home', 'h', '--json'], cwd);
    expect(r.code).toBe(3);
    const err = JSON.parse(r.err) as { error: { code: string; field: string; message: string } };
    expect(err.error.code).toBe('config_invalid');
    expect(err.error.field).toBe(field);
    expect(err.error.message).toContain(field);
  });

  it('a missing home says to run heddle init', async () => {
    const r = await runCaptured(['controller', 'run', '--home', 'nowhere'], tempDir());
    expect(r.code).toBe(3);
    expect(r.err).toContain('heddle init');
  });
});

describe('heddle init on an unusable home', () => {
  it('a home under /proc fails at once (exit 3, home_unusable) instead of spinning at 100% CPU', async () => {
    const t = Date.now();
    const r = await runCaptured(['init', '--home', '/proc/self/heddle-home', '--json'], tempDir());
    expect(r.code).toBe(3);
    expect(JSON.parse(r.err)).toMatchObject({ error: { code: 'home_unusable', field: 'home' } });
    expect(Date.now() - t).toBeLessThan(5000);
  });

  it('a home where directories may not be created is permission_denied (exit 1), not an internal error', async () => {
    const r = await runCaptured(['init', '--home', '/sys/heddle-home', '--json'], tempDir());
    expect(r.code).toBe(1);
    expect(JSON.parse(r.err)).toMatchObject({ error: { code: 'permission_denied', field: 'home' } });
  });
});
