import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CliRun, runCaptured as capture } from '@heddle/cli-kit/testing';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli.js';
import { tempDir } from '../test-io.js';

const FP = `sha256:${'ab'.repeat(32)}`;

function heddle(cwd: string, args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return capture(runCli, args, { cwd, env: { HEDDLE_CONFIG_DIR: join(cwd, 'cfg'), HOME: cwd, ...env } });
}

describe('heddle context', () => {
  it('adds, lists, uses and removes contexts in a 0600 file', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'k.key'), 'x');
    const add = await heddle(cwd, [
      'context',
      'add',
      'lab',
      '--url',
      'https://10.0.0.5:7443/',
      '--fingerprint',
      FP.toUpperCase().replace('SHA256:', ''),
      '--key',
      'k.key',
      '--json',
    ]);
    expect(add.code, add.err).toBe(0);
    const file = join(cwd, 'cfg', 'contexts.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // cast: the file as written (checked field by field below).
    const saved = JSON.parse(readFileSync(file, 'utf8')) as {
      current: null;
      contexts: { url: string; fingerprint: string; key_file: string }[];
    };
    expect(saved.contexts[0]).toEqual({
      name: 'lab',
      url: 'https://10.0.0.5:7443',
      fingerprint: FP,
      key_file: join(cwd, 'k.key'),
    });
    expect(saved.current).toBeNull();
    expect(
      (await heddle(cwd, ['context', 'add', 'lab', '--url', 'https://x:1', '--token-file', 't'])).code,
    ).toBe(3);
    expect((await heddle(cwd, ['context', 'use', 'nope'])).code).toBe(3);
    expect((await heddle(cwd, ['context', 'use', 'lab'])).code).toBe(0);
    const ls = await heddle(cwd, ['context', 'ls', '--json']);
    expect(JSON.parse(ls.out)).toMatchObject({ current: 'lab', contexts: [{ name: 'lab' }] });
    expect((await heddle(cwd, ['context', 'ls'])).out).toMatch(/^\s*\*\s+lab\s+https:\/\/10\.0\.0\.5:7443/m);
    expect((await heddle(cwd, ['context', 'rm', 'lab'])).code).toBe(0);
    expect(JSON.parse((await heddle(cwd, ['context', 'ls', '--json'])).out)).toEqual({
      current: null,
      contexts: [],
    });
  });

  it('refuses bad flags and a bad file naming the field', async () => {
    const cwd = tempDir();
    const both = await heddle(cwd, [
      'context',
      'add',
      'a',
      '--url',
      'https://x:1',
      '--key',
      'k',
      '--token-file',
      't',
    ]);
    expect(both.code).toBe(2);
    const fp = await heddle(cwd, [
      'context',
      'add',
      'a',
      '--url',
      'https://x:1',
      '--key',
      'k',
      '--fingerprint',
      'sha1:00',
      '--json',
    ]);
    expect(fp.code).toBe(3);
    expect(JSON.parse(fp.err).error).toMatchObject({ code: 'invalid_input', field: 'fingerprint' });
    const url = await heddle(cwd, ['context', 'add', 'a', '--url', 'ftp://x', '--key', 'k', '--json']);
    expect(JSON.parse(url.err).error).toMatchObject({ field: 'url' });
    const dir = join(cwd, 'bad');
    const env = { HEDDLE_CONFIG_DIR: dir };
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'contexts.json'),
      JSON.stringify({ schema: 'heddle.contexts.v1', current: 'x', contexts: [] }),
    );
    const bad = await heddle(cwd, ['context', 'ls', '--json'], env);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.err).error).toMatchObject({ code: 'contexts_invalid', field: 'current' });
    // An operator command with that file and no home refuses the same way, naming the field.
    const ps = await heddle(cwd, ['ps', '--json'], env);
    expect(JSON.parse(ps.err).error).toMatchObject({ code: 'contexts_invalid', field: 'current' });
    const unknown = await heddle(cwd, ['ps', '--json'], { HEDDLE_CONTEXT: 'nope' });
    expect(JSON.parse(unknown.err).error).toMatchObject({ code: 'unknown_context', field: 'HEDDLE_CONTEXT' });
  });
});
