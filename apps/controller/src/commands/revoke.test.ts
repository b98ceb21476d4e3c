import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, saveKeyFile, toHex } from '@heddle/envelope';
import { RevocationList } from '@heddle/package';
import { describe, expect, it } from 'vitest';
import { CliError } from '../cli-error.js';
import type { CliIo } from '../io.js';
import { revoke } from './revoke.js';

async function run(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: () => undefined, cwd };
  try {
    return { code: await revoke(args, io), out: out.join('\n'), err: '' };
  } catch (e) {
    return {
      code: e instanceof CliError ? e.exitCode : 3,
      out: out.join('\n'),
      err: `${(e as { code?: string }).code}`,
    };
  }
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-revoke-cli-'));
  const ops = generateKeyPair();
  const other = generateKeyPair();
  saveKeyFile(join(dir, 'ops.key'), ops);
  saveKeyFile(join(dir, 'other.key'), other);
  const trust = {
    schema: 'heddle.trust.v1',
    keys: [{ id: 'ops', role: 'operator', public_key: toHex(ops.publicKey) }],
  };
  writeFileSync(join(dir, 'trust.json'), JSON.stringify(trust));
  return { dir, ops, other };
}

describe('heddle revoke', () => {
  it('adds signed entries, increments the generation and lists them', async () => {
    const { dir, ops } = setup();
    const a = 'a'.repeat(64);
    const r1 = await run(
      [
        'package',
        a,
        '--key',
        'ops.key',
        '--list',
        'rl.json',
        '--trust',
        'trust.json',
        '--reason',
        'leaked',
        '--json',
      ],
      dir,
    );
    expect(r1.code, r1.err).toBe(0);
    expect(JSON.parse(r1.out)).toMatchObject({ generation: 1, changed: true, kind: 'package' });
    const r2 = await run(
      ['signer', toHex(ops.publicKey).toUpperCase(), '--key', 'ops.key', '--list', 'rl.json', '--json'],
      dir,
    );
    expect(JSON.parse(r2.out)).toMatchObject({ generation: 2, ref: toHex(ops.publicKey) });
    const again = await run(['package', a, '--key', 'ops.key', '--list', 'rl.json', '--json'], dir);
    expect(JSON.parse(again.out)).toMatchObject({ generation: 2, changed: false });
    const list = RevocationList.load(join(dir, 'rl.json'), { trustedKeys: [toHex(ops.publicKey)] });
    expect(list.entries.map((e) => e.kind)).toEqual(['package', 'signer']);
    const ls = await run(['ls', '--list', 'rl.json', '--trust', 'trust.json', '--json'], dir);
    expect(JSON.parse(ls.out)).toMatchObject({ generation: 2, signers_checked: true });
    const human = await run(['ls', '--list', 'rl.json'], dir);
    expect(human.out).toMatch(/generation 2, valid until [0-9TZ:.-]+, 2 entries/);
    expect(human.out).toContain('leaked');
  });

  it('refuses a key that is not an operator in the trust file, and a list it cannot verify', async () => {
    const { dir } = setup();
    const a = 'b'.repeat(64);
    expect(
      (await run(['artifact', a, '--key', 'other.key', '--list', 'rl.json', '--trust', 'trust.json'], dir))
        .code,
    ).toBe(3);
    expect((await run(['artifact', a, '--key', 'ops.key', '--list', 'rl.json'], dir)).code).toBe(0);
    // The list is signed by ops; adding with another key without --trust cannot verify the existing entries.
    const r = await run(['artifact', 'c'.repeat(64), '--key', 'other.key', '--list', 'rl.json'], dir);
    expect(r).toMatchObject({ code: 3, err: 'revocation_list_invalid' });
    writeFileSync(
      join(dir, 'rl.json'),
      readFileSync(join(dir, 'rl.json'), 'utf8').replace('"generation":1', '"generation":5'),
    );
    expect((await run(['ls', '--list', 'rl.json', '--trust', 'trust.json'], dir)).code).toBe(3);
    expect((await run(['ls', '--list', 'missing.json'], dir)).code).toBe(0); // nothing revoked yet
  });

  it('refuses to extend or show a validly signed list older than the generation it recorded', async () => {
    const { dir } = setup();
    const add = (c: string) =>
      run(['artifact', c.repeat(64), '--key', 'ops.key', '--list', 'rl.json', '--trust', 'trust.json'], dir);
    expect((await add('a')).code).toBe(0);
    const gen1 = readFileSync(join(dir, 'rl.json'));
    expect((await add('b')).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'rl.json.generation'), 'utf8'))).toMatchObject({
      generation: 2,
    });
    writeFileSync(join(dir, 'rl.json'), gen1);
    expect(await add('c')).toMatchObject({ code: 3, err: 'revocation_rollback' });
    expect(await run(['ls', '--list', 'rl.json', '--trust', 'trust.json'], dir)).toMatchObject({
      code: 3,
      err: 'revocation_rollback',
    });
    // The old list was not overwritten by the refused command.
    expect(readFileSync(join(dir, 'rl.json'))).toEqual(gen1);
  });

  it('ls of a list that does not exist yet says nothing is revoked; a deleted list past its mark is a rollback', async () => {
    const { dir } = setup();
    const none = await run(['ls', '--list', 'rl.json', '--trust', 'trust.json'], dir);
    expect(none).toMatchObject({ code: 0 });
    expect(none.out).toContain('nothing is revoked (generation 0)');
    const json = await run(['ls', '--list', 'rl.json', '--json'], dir);
    expect(JSON.parse(json.out)).toMatchObject({ exists: false, generation: 0, entries: [] });
    await run(
      ['package', 'a'.repeat(64), '--key', 'ops.key', '--list', 'rl.json', '--trust', 'trust.json'],
      dir,
    );
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, 'rl.json'));
    expect(await run(['ls', '--list', 'rl.json', '--trust', 'trust.json'], dir)).toMatchObject({
      err: 'revocation_rollback',
    });
  });

  it('refuses usage errors with exit code 2', async () => {
    const { dir } = setup();
    expect((await run([], dir)).code).toBe(2);
    expect((await run(['node', 'a'.repeat(64), '--key', 'ops.key'], dir)).code).toBe(2);
    expect((await run(['package', 'xyz', '--key', 'ops.key'], dir)).code).toBe(2);
    expect((await run(['package', 'a'.repeat(64)], dir)).code).toBe(2);
    expect((await run(['ls', 'extra'], dir)).code).toBe(2);
  });

  it('renew re-signs the same entries with a fresh expiry, past a host mark with --above', async () => {
    const { dir } = setup();
    const pkg = 'c'.repeat(64);
    expect(
      (await run(['package', pkg, '--key', 'ops.key', '--list', 'r.json', '--valid-days', '2'], dir)).code,
    ).toBe(0);
    const first = RevocationList.load(join(dir, 'r.json'), { trustedKeys: [], trustNamedSigners: true });
    const r = await run(
      ['renew', '--key', 'ops.key', '--list', 'r.json', '--trust', 'trust.json', '--above', '500', '--json'],
      dir,
    );
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { generation: number; expires_at_ms: number; entries: number };
    expect(out).toMatchObject({ generation: 501, entries: 1 });
    expect(out.expires_at_ms).toBeGreaterThan((first.expiresAtMs as number) + 20 * 24 * 3600 * 1000);
    const ls = await run(['ls', '--list', 'r.json', '--trust', 'trust.json', '--json'], dir);
    expect(JSON.parse(ls.out)).toMatchObject({ generation: 501, expired: false });
    expect(
      (await run(['renew', '--key', 'ops.key', '--list', 'r.json', '--valid-days', '999'], dir)).code,
    ).toBe(2);
  });
});
