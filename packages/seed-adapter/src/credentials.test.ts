import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isValidToken, loadToken, redact, removeToken, saveToken } from './credentials.js';
import { SeedError } from './errors.js';

const dir = mkdtempSync(join(tmpdir(), 'seed-cred-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOKEN = 'Zm9vYmFyYmF6cXV4LXNlY3JldA_-';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SeedError);
    expect((err as Error).message).not.toContain(TOKEN);
    return (err as SeedError).code;
  }
  throw new Error('expected a SeedError');
}

describe('token files', () => {
  it('saves owner-only (0600), atomically, and loads back', () => {
    const p = join(dir, 'sub', 'seed.token');
    saveToken(p, TOKEN);
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'sub')).mode & 0o077).toBe(0);
    expect(readFileSync(p, 'utf8')).toBe(`${TOKEN}\n`);
    expect(loadToken(p)).toBe(TOKEN);
    saveToken(p, `${TOKEN}2`);
    expect(loadToken(p)).toBe(`${TOKEN}2`);
    expect(statSync(p).mode & 0o777).toBe(0o600);
  });

  it('refuses a file readable or writable by group or others', () => {
    const p = join(dir, 'open.token');
    saveToken(p, TOKEN);
    for (const mode of [0o640, 0o604, 0o620, 0o644]) {
      chmodSync(p, mode);
      expect(code(() => loadToken(p))).toBe('credentials');
    }
    chmodSync(p, 0o400);
    expect(loadToken(p)).toBe(TOKEN);
  });

  it('refuses a missing, empty, oversized or malformed file, and a directory', () => {
    expect(code(() => loadToken(join(dir, 'nope')))).toBe('credentials');
    const empty = join(dir, 'empty.token');
    writeFileSync(empty, '\n', { mode: 0o600 });
    expect(code(() => loadToken(empty))).toBe('credentials');
    const bad = join(dir, 'bad.token');
    writeFileSync(bad, 'two words\n', { mode: 0o600 });
    expect(code(() => loadToken(bad))).toBe('credentials');
    const big = join(dir, 'big.token');
    writeFileSync(big, 'a'.repeat(5000), { mode: 0o600 });
    expect(code(() => loadToken(big))).toBe('credentials');
    expect(code(() => loadToken(dir))).toBe('credentials');
  });

  it('refuses to save a malformed token, without echoing it', () => {
    expect(code(() => saveToken(join(dir, 'x.token'), 'short'))).toBe('credentials');
    expect(code(() => saveToken(join(dir, 'x.token'), `${TOKEN}\nX-Injected: 1`))).toBe('credentials');
  });

  it('removes a token file', () => {
    const p = join(dir, 'gone.token');
    saveToken(p, TOKEN);
    expect(removeToken(p)).toBe(true);
    expect(removeToken(p)).toBe(false);
  });
});

describe('redact', () => {
  it('replaces every occurrence', () => {
    expect(redact(`a ${TOKEN} b ${TOKEN}${TOKEN}`, TOKEN)).toBe('a [redacted] b [redacted][redacted]');
    expect(redact('nothing', TOKEN)).toBe('nothing');
    expect(redact('nothing', undefined)).toBe('nothing');
    expect(redact('nothing', '')).toBe('nothing');
  });
  it('validates tokens', () => {
    expect(isValidToken(TOKEN)).toBe(true);
    expect(isValidToken('abc')).toBe(false);
    expect(isValidToken('abcdefgh ij')).toBe(false);
    expect(isValidToken(42)).toBe(false);
  });
});
