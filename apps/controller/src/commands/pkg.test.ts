import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, publicKeyToPem, saveKeyFile, toHex } from '@heddle/envelope';
import { RevocationList } from '@heddle/package';
import { describe, expect, it } from 'vitest';
import { CliError } from '../cli-error.js';
import type { CliIo } from '../io.js';
import { pkg } from './pkg.js';

const example = fileURLToPath(new URL('../../../../examples/hello-cog', import.meta.url));

interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `heddle pkg ...` in process; a thrown CliError or HeddleError is turned into its exit code. */
async function run(args: string[], cwd: string): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), cwd };
  try {
    const code = await pkg(args, io);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } catch (e) {
    const code = e instanceof CliError ? e.exitCode : 3;
    return { code, out: out.join('\n'), err: `${(e as { code?: string }).code}: ${(e as Error).message}` };
  }
}

function setup(): { dir: string; pub: string } {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-pkg-cli-'));
  const keys = generateKeyPair();
  saveKeyFile(join(dir, 'publisher.key'), keys);
  const trust = {
    schema: 'heddle.trust.v1',
    keys: [{ id: 'ci', role: 'publisher', public_key: publicKeyToPem(keys.publicKey) }],
  };
  writeFileSync(join(dir, 'trust.json'), JSON.stringify(trust));
  return { dir, pub: toHex(keys.publicKey) };
}

describe('heddle pkg', () => {
  it('build, sign, verify and inspect the example cog', async () => {
    const { dir, pub } = setup();
    const built = await run(['build', example, '-o', 'out', '--json'], dir);
    expect(built.code, built.err).toBe(0);
    const b = JSON.parse(built.out) as { package_id: string; signatures: string[] };
    expect(b.signatures).toEqual([]);
    const unsigned = await run(['verify', 'out', '--trust', 'trust.json', '--json'], dir);
    expect(unsigned.code).toBe(1);
    expect(JSON.parse(unsigned.out)).toMatchObject({ verdict: 'refused', code: 'missing_signature' });
    const signed = await run(['sign', 'out', '--key', 'publisher.key', '--json'], dir);
    expect(signed.code, signed.err).toBe(0);
    expect(JSON.parse(signed.out)).toMatchObject({ package_id: b.package_id, signers: [pub] });
    const ok = await run(['verify', 'out', '--trust', 'trust.json', '--json'], dir);
    expect(ok.code, ok.err).toBe(0);
    const v = JSON.parse(ok.out) as {
      verdict: string;
      package_id: string;
      signers: unknown[];
      files: Array<{ path: string }>;
    };
    expect(v).toMatchObject({
      verdict: 'ok',
      package_id: b.package_id,
      signers: [{ id: 'ci', public_key: pub }],
    });
    expect(v.files.map((f) => f.path)).toEqual(['bin/hello.sh', 'hello.wasm']);
    const human = await run(['verify', 'out', '--trust', 'trust.json'], dir);
    expect(human.out).toContain('verdict: OK');
    expect(human.out).toContain(`package id:    ${b.package_id}`);
    const inspected = await run(['inspect', 'out'], dir);
    expect(inspected.code).toBe(0);
    expect(inspected.out).toContain('cog hello-cog 0.1.0');
    expect(inspected.out).toContain('not checked');
  });

  it('verify reports a tampered file with exit code 1 and the error code', async () => {
    const { dir } = setup();
    expect((await run(['build', example, '-o', 'out', '--key', 'publisher.key'], dir)).code).toBe(0);
    writeFileSync(join(dir, 'out', 'hello.wasm'), 'not wasm');
    const r = await run(['verify', 'out', '--trust', 'trust.json'], dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain('verdict: REFUSED (file_tampered)');
  });

  it('verify with a revocation list that cannot be read fails closed', async () => {
    const { dir } = setup();
    await run(['build', example, '-o', 'out', '--key', 'publisher.key'], dir);
    writeFileSync(join(dir, 'revocations.json'), '{broken');
    const r = await run(
      ['verify', 'out', '--trust', 'trust.json', '--revocations', 'revocations.json', '--json'],
      dir,
    );
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'refused', code: 'revoked' });
  });

  it('verify with a validly signed but older revocation list than the one seen before fails closed', async () => {
    const { dir } = setup();
    const ops = generateKeyPair();
    const trust = JSON.parse(readFileSync(join(dir, 'trust.json'), 'utf8')) as { keys: unknown[] };
    trust.keys.push({ id: 'ops', role: 'operator', public_key: toHex(ops.publicKey) });
    writeFileSync(join(dir, 'trust.json'), JSON.stringify(trust));
    await run(['build', example, '-o', 'out', '--key', 'publisher.key'], dir);
    const path = join(dir, 'revocations.json');
    const gen1 = RevocationList.empty().add({ kind: 'artifact', ref: 'a'.repeat(64), revokedAtMs: 1 }, ops);
    const gen2 = gen1.add({ kind: 'artifact', ref: 'b'.repeat(64), revokedAtMs: 2 }, ops);
    gen2.save(path);
    const args = ['verify', 'out', '--trust', 'trust.json', '--revocations', 'revocations.json', '--json'];
    const ok = await run(args, dir);
    expect(ok.code, ok.out).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ verdict: 'ok', revocation_generation: 2 });
    writeFileSync(path, gen1.encode()); // validly signed, one generation back
    const r = await run(args, dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'refused', code: 'revoked' });
    expect(JSON.parse(r.out).message).toMatch(/revocation_rollback/);
    const human = await run(['verify', 'out', '--trust', 'trust.json'], dir);
    expect(human.out).toContain('revocations:   not checked');
  });

  it('verify --revocations works read-only: no mark file is written next to the list', async () => {
    const { dir } = setup();
    const ops = generateKeyPair();
    const trust = JSON.parse(readFileSync(join(dir, 'trust.json'), 'utf8')) as { keys: unknown[] };
    trust.keys.push({ id: 'ops', role: 'operator', public_key: toHex(ops.publicKey) });
    writeFileSync(join(dir, 'trust.json'), JSON.stringify(trust));
    await run(['build', example, '-o', 'out', '--key', 'publisher.key'], dir);
    const lists = join(dir, 'lists');
    mkdirSync(lists);
    RevocationList.empty()
      .add({ kind: 'artifact', ref: 'a'.repeat(64), revokedAtMs: 1 }, ops)
      .save(join(lists, 'revocations.json'), { generationFile: false });
    chmodSync(lists, 0o555); // read-only for anyone but root; the check below holds for root too
    try {
      const args = [
        'verify',
        'out',
        '--trust',
        'trust.json',
        '--revocations',
        'lists/revocations.json',
        '--json',
      ];
      const r = await run(args, dir);
      expect(r.code, r.out).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ verdict: 'ok', revocation_generation: 1 });
      expect(readdirSync(lists)).toEqual(['revocations.json']);
    } finally {
      chmodSync(lists, 0o755);
    }
  });

  it('init writes a template that builds once its files exist, and refuses to overwrite', async () => {
    const { dir } = setup();
    expect((await run(['init', 'src', '--id', 'my-cog'], dir)).code).toBe(0);
    const source = JSON.parse(readFileSync(join(dir, 'src', 'cog.json'), 'utf8')) as { id: string };
    expect(source.id).toBe('my-cog');
    expect((await run(['init', 'src'], dir)).code).toBe(3);
    expect((await run(['build', 'src', '-o', 'out'], dir)).code).toBe(3);
    mkdirSync(join(dir, 'src', 'bin'));
    writeFileSync(join(dir, 'src', 'bin', 'run.sh'), '#!/bin/sh\necho hi\n');
    expect((await run(['build', 'src', '-o', 'out'], dir)).code).toBe(0);
  });

  it('refuses usage errors with exit code 2 and bad input with exit code 3', async () => {
    const { dir } = setup();
    expect((await run([], dir)).code).toBe(2);
    expect((await run(['frob'], dir)).code).toBe(2);
    expect((await run(['build', example], dir)).code).toBe(2);
    expect((await run(['verify', 'out'], dir)).code).toBe(2);
    expect((await run(['sign', 'out'], dir)).code).toBe(2);
    expect((await run(['verify', 'out', '--trust', 'trust.json', '--bogus'], dir)).code).toBe(2);
    expect((await run(['init', '--id', 'Bad Id'], dir)).code).toBe(2);
    expect((await run(['verify', 'out', '--trust', 'missing.json'], dir)).code).toBe(3);
    expect((await run(['sign', 'out', '--key', 'missing.key'], dir)).code).toBe(3);
    expect((await run(['inspect', 'nowhere'], dir)).code).toBe(3);
  });
});
