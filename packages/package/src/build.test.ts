import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCogPackage } from './build.js';
import type { CogBody } from './cog.js';
import type { CogSource } from './cog-source.js';
import { PackageError } from './errors.js';
import { ENVELOPE_FILE } from './limits.js';
import { readEnvelope } from './manifest.js';
import { NO_REVOCATIONS } from './revocation.js';
import { signPackage } from './sign.js';
import { anchorsFor, fixedKeys, sampleSource, tempDir, writeSource } from './test-fixtures.js';
import { verifyPackage } from './verify.js';

const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));

function treeBytes(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) Object.assign(out, treeBytes(dir, p));
    else out[p] = readFileSync(join(dir, p)).toString('base64');
  }
  return out;
}

describe('buildCogPackage', () => {
  it('is deterministic: copies written in another order, with other mtimes and modes, give the same bytes', async () => {
    const files: Record<string, string | Uint8Array> = {
      'bin/run.sh': '#!/bin/sh\necho hi\n',
      'run.wasm': new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]),
      'share/a.txt': 'a',
      'share/b.txt': 'b',
    };
    const source = sampleSource({ files: ['share/b.txt', 'share/a.txt'] });
    const copy = (order: string[], mode: number, mtimeSec: number, umask: number): string => {
      const dir = tempDir('heddle-src-');
      const previous = process.umask(umask);
      try {
        for (const path of order) {
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          writeFileSync(join(dir, path), files[path] as string | Uint8Array);
          chmodSync(join(dir, path), mode);
          utimesSync(join(dir, path), mtimeSec, mtimeSec);
        }
        writeFileSync(join(dir, 'cog.json'), JSON.stringify(source, null, 2));
      } finally {
        process.umask(previous);
      }
      return dir;
    };
    const order = Object.keys(files);
    const first = copy(order, 0o644, 1_000_000, 0o022);
    const second = copy([...order].reverse(), 0o700, 2_000_000_000, 0o077);
    expect(statSync(join(second, 'run.wasm')).mode & 0o777).toBe(0o700);
    const keys = fixedKeys(3);
    const a = await buildCogPackage(first, join(tempDir(), 'a'), { keys: [keys] });
    const previous = process.umask(0o077);
    let b: Awaited<ReturnType<typeof buildCogPackage>>;
    try {
      b = await buildCogPackage(second, join(tempDir(), 'b'), { keys: [keys] });
    } finally {
      process.umask(previous);
    }
    expect(treeBytes(b.dir)).toEqual(treeBytes(a.dir));
    expect(b.package.manifestHash).toBe(a.package.manifestHash);
    expect(Object.keys(treeBytes(a.dir)).sort()).toEqual([
      'bin/run.sh',
      ENVELOPE_FILE,
      'run.wasm',
      'share/a.txt',
      'share/b.txt',
    ]);
  });

  it('writes a body with variants split into arch and route, files sorted and hashed', async () => {
    const built = await buildCogPackage(writeSource(), join(tempDir(), 'p'));
    const body = built.package.body as CogBody;
    expect(body.variants['wasm32-wasi']).toEqual({ route: 'wasi', arch: 'wasm32', file: 'run.wasm' });
    expect(body.files.map((f) => f.path)).toEqual(['bin/run.sh', 'run.wasm']);
    expect(body.files[0]?.size).toBe('#!/bin/sh\necho hi\n'.length);
    expect(built.package.envelope.signatures).toEqual([]);
  });

  it('then sign then verify: the example cog in examples/hello-cog', async () => {
    const keys = generateKeyPair();
    const built = await buildCogPackage(join(examples, 'hello-cog'), join(tempDir(), 'hello'));
    signPackage(built.dir, [keys]);
    const w = await verifyPackage<CogBody>(built.dir, {
      anchors: anchorsFor([keys]),
      revocations: NO_REVOCATIONS,
    });
    expect(w.body.id).toBe('hello-cog');
    expect(Object.keys(w.body.variants).sort()).toEqual(['aarch64-native', 'wasm32-wasi', 'x86_64-native']);
    expect(w.packageId).toBe(built.package.packageId);
  });

  it('signing twice with the same key keeps one signature; a second key adds one', async () => {
    const a = fixedKeys(1);
    const b = fixedKeys(2);
    const built = await buildCogPackage(writeSource(), join(tempDir(), 'p'), { keys: [a] });
    const once = readFileSync(join(built.dir, ENVELOPE_FILE));
    signPackage(built.dir, [a]);
    expect(readFileSync(join(built.dir, ENVELOPE_FILE))).toEqual(once);
    const two = signPackage(built.dir, [b]);
    expect(two.envelope.signatures).toHaveLength(2);
    expect(two.packageId).toBe(built.package.packageId);
    expect(readEnvelope(built.dir).manifestHash).toBe(two.manifestHash);
  });

  it('refuses a missing file, a symbolic link, an oversized file and a non-empty output directory', async () => {
    const code = async (src: string, opts: { maxFileBytes?: number } = {}, out = join(tempDir(), 'o')) =>
      buildCogPackage(src, out, opts).then(
        () => 'ok',
        (e: unknown) => (e instanceof PackageError ? e.code : String(e)),
      );
    expect(await code(writeSource(sampleSource(), { 'bin/run.sh': 'x' }))).toBe('build_failed');
    const linked = writeSource(sampleSource(), { 'bin/run.sh': 'x' });
    writeFileSync(join(linked, '..', 'outside.wasm'), 'secret');
    symlinkSync(join(linked, '..', 'outside.wasm'), join(linked, 'run.wasm'));
    expect(await code(linked)).toBe('build_failed');
    expect(await code(writeSource(), { maxFileBytes: 4 })).toBe('build_failed');
    const out = tempDir();
    writeFileSync(join(out, 'stray'), 'x');
    expect(await code(writeSource(), {}, out)).toBe('build_failed');
  });

  it('replaces an existing package with force', async () => {
    const src = writeSource();
    const out = join(tempDir(), 'p');
    await buildCogPackage(src, out);
    await expect(buildCogPackage(src, out)).rejects.toMatchObject({ code: 'build_failed' });
    await expect(buildCogPackage(src, out, { force: true })).resolves.toBeDefined();
  });

  it('refuses a malformed cog.json naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ ...sampleSource(), id: 'Bad Id' }, 'id'],
      [{ ...sampleSource(), version: '1.0' }, 'version'],
      [{ ...sampleSource(), variants: { 'x86_64-wasi': 'run.wasm' } }, 'variants.x86_64-wasi'],
      [{ ...sampleSource(), variants: { 'x86_64-native': '../escape' } }, 'variants.x86_64-native'],
      [{ ...sampleSource(), variants: {} }, 'variants'],
      [{ ...sampleSource(), resources: { cpu_pct: 0, ram_mb: 1 } }, 'resources.cpu_pct'],
      [{ ...sampleSource(), config: { x: { type: 'integer', min: 5, max: 1 } } }, 'config.x.min'],
      [
        { ...sampleSource(), config: { x: { type: 'enum', values: ['a'], default: 'b' } } },
        'config.x.default',
      ],
      [{ ...sampleSource(), surprise: true }, '$'],
    ];
    for (const [source, field] of cases) {
      const src = writeSource(source as CogSource);
      const err = await buildCogPackage(src, join(tempDir(), 'o')).catch((e: unknown) => e as PackageError);
      expect(err, field).toMatchObject({ code: 'source_invalid' });
      expect((err as PackageError).field, JSON.stringify(source)).toBe(field);
    }
    const junk = writeSource();
    writeFileSync(join(junk, 'cog.json'), '{"id": "a", "id": "b"}');
    await expect(buildCogPackage(junk, join(tempDir(), 'o'))).rejects.toMatchObject({
      code: 'source_invalid',
    });
  });

  it('build then verify round-trips for random valid manifests (property)', async () => {
    const arb = fc.record({
      id: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/),
      version: fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map(([a, b, c]) => `${a}.${b}.${c}`),
      variants: fc.subarray(
        ['x86_64-native', 'aarch64-native', 'wasm32-wasi', 'aarch64-container', 'riscv64-native'],
        {
          minLength: 1,
        },
      ),
      extra: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9]{0,8}(\/[a-z][a-z0-9]{0,8})?$/), {
        maxLength: 4,
        selector: (s) => s.toLowerCase(),
      }),
      contents: fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 10, maxLength: 10 }),
      cpu: fc.integer({ min: 1, max: 6400 }),
      ram: fc.integer({ min: 1, max: 4096 }),
      max: fc.integer({ min: 1, max: 1000 }),
      redistributable: fc.option(fc.boolean(), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(arb, async (r) => {
        const files: Record<string, Uint8Array> = {};
        const variants: Record<string, string> = {};
        r.variants.forEach((v, i) => {
          variants[v] = `v/${v}.bin`;
          files[`v/${v}.bin`] = r.contents[i] as Uint8Array;
        });
        // Extra files must not clash with a directory or file the variants use.
        const extra = r.extra.filter(
          (p) => !p.startsWith('v/') && p !== 'v' && !r.extra.some((q) => q.startsWith(`${p}/`)),
        );
        extra.forEach((p, i) => {
          files[p] = r.contents[5 + i] as Uint8Array;
        });
        const source: CogSource = {
          id: r.id,
          version: r.version,
          variants,
          files: extra,
          config: { n: { type: 'integer', min: 0, max: r.max, default: 0 } },
          resources: { cpu_pct: r.cpu, ram_mb: r.ram },
          ...(r.redistributable === undefined ? {} : { redistributable: r.redistributable }),
        };
        const keys = generateKeyPair();
        const built = await buildCogPackage(writeSource(source, files), join(tempDir(), 'p'), {
          keys: [keys],
        });
        const w = await verifyPackage<CogBody>(built.dir, {
          anchors: anchorsFor([keys]),
          revocations: NO_REVOCATIONS,
        });
        expect(w.body.id).toBe(r.id);
        expect(w.files.map((f) => f.path).sort()).toEqual(Object.keys(files).sort());
        expect(w.packageId).toBe(built.package.packageId);
      }),
      { numRuns: 25 },
    );
  });
});
