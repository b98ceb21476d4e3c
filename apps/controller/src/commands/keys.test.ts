import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeIdFromPublicKey, parsePublicKey, publicKeyToPem } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { runCaptured, tempDir } from '../test-io.js';

describe('heddle keygen', () => {
  it('writes an owner-only key file and prints its id', async () => {
    const dir = tempDir();
    const r = await runCaptured(['keygen', '--out', 'node.key', '--json'], dir);
    expect(r.code).toBe(0);
    const res = JSON.parse(r.out) as { path: string; node_id: string; public_key: string };
    expect(res.path).toBe(join(dir, 'node.key'));
    expect(statSync(res.path).mode & 0o777).toBe(0o600);
    expect(res.node_id).toBe(nodeIdFromPublicKey(parsePublicKey(res.public_key)));
  });

  it('refuses to overwrite a key unless --force', async () => {
    const dir = tempDir();
    expect((await runCaptured(['keygen'], dir)).code).toBe(0);
    const again = await runCaptured(['keygen'], dir);
    expect(again.code).toBe(3);
    expect(again.err).toMatch(/already exists/);
    expect((await runCaptured(['keygen', '--force'], dir)).code).toBe(0);
  });

  it('refuses unknown flags and stray arguments with exit code 2', async () => {
    const dir = tempDir();
    expect((await runCaptured(['keygen', '--bogus'], dir)).code).toBe(2);
    expect((await runCaptured(['keygen', 'extra'], dir)).code).toBe(2);
    const json = await runCaptured(['keygen', '--bogus', '--json'], dir);
    expect(JSON.parse(json.err)).toMatchObject({ error: { code: 'usage' } });
  });
});

describe('heddle id', () => {
  it('reads a secret key file, a PEM file and inline hex, all to the same id', async () => {
    const dir = tempDir();
    const gen = JSON.parse((await runCaptured(['keygen', '--json'], dir)).out) as {
      node_id: string;
      public_key: string;
    };
    writeFileSync(join(dir, 'pub.pem'), publicKeyToPem(parsePublicKey(gen.public_key)));
    for (const arg of ['heddle.key', 'pub.pem', gen.public_key, gen.public_key.toUpperCase()]) {
      const r = await runCaptured(['id', arg, '--json'], dir);
      expect(r.code, arg).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ node_id: gen.node_id, public_key: gen.public_key });
    }
    const human = await runCaptured(['id', 'heddle.key'], dir);
    expect(human.out).toContain(`node id:    ${gen.node_id}`);
  });

  it('refuses a world-readable secret key, a missing file and junk with exit code 3', async () => {
    const dir = tempDir();
    await runCaptured(['keygen'], dir);
    chmodSync(join(dir, 'heddle.key'), 0o644);
    const loose = await runCaptured(['id', 'heddle.key', '--json'], dir);
    expect(loose.code).toBe(3);
    expect(JSON.parse(loose.err)).toMatchObject({ error: { code: 'key_file_permissions' } });
    expect((await runCaptured(['id', 'nope.key'], dir)).code).toBe(3);
    writeFileSync(join(dir, 'junk'), 'not a key');
    const junk = await runCaptured(['id', 'junk', '--json'], dir);
    expect(junk.code).toBe(3);
    expect(JSON.parse(junk.err)).toMatchObject({ error: { code: 'invalid_public_key' } });
  });

  it('needs exactly one argument', async () => {
    expect((await runCaptured(['id'], tempDir())).code).toBe(2);
  });
});

describe('heddle', () => {
  it('prints help, and refuses an unknown command with exit code 2', async () => {
    const dir = tempDir();
    const help = await runCaptured(['help'], dir);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/keygen/);
    expect((await runCaptured(['frobnicate'], dir)).code).toBe(2);
  });
});
