import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { blake3Hex, utf8 } from '@heddle/envelope';
import type { RevocationCheck } from '@heddle/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { BuildResult } from './build.js';
import { defaultKindRegistry } from './cog.js';
import { PackageError } from './errors.js';
import { encodeEnvelope } from './format.js';
import type { KindDefinition, KindRegistry } from './kind-registry.js';
import { ENVELOPE_FILE, PACKAGE_SCHEMA } from './limits.js';
import { readEnvelope } from './manifest.js';
import { type PackageFetcher, VerifiedPackageStore } from './package-store.js';
import { NO_REVOCATIONS } from './revocation.js';
import { signEnvelope } from './sign.js';
import { anchorsFor, buildSigned, fixedKeys, sampleSource, tempDir } from './test-fixtures.js';

const keys = fixedKeys(0x21);
const stranger = fixedKeys(0x22);
const anchors = anchorsFor([keys]);
const roots: string[] = [];

let pkg: BuildResult;
let other: BuildResult;
let untrusted: BuildResult;
beforeAll(async () => {
  pkg = await buildSigned([keys]);
  other = await buildSigned([keys], sampleSource({ version: '2.0.0' }));
  untrusted = await buildSigned([stranger]);
});
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const hashOf = (b: BuildResult): string => b.package.manifestHash;

function newStore(revocations: RevocationCheck = NO_REVOCATIONS, kinds?: KindRegistry) {
  const root = tempDir('heddle-pkg-store-');
  roots.push(root);
  const dir = join(root, 'packages');
  const store = new VerifiedPackageStore({ dir, anchors, revocations, ...(kinds ? { kinds } : {}) });
  return { dir, store };
}

/** A fetcher that copies `from` into the destination (then runs `after` on it), counting calls. */
function copying(from: string, after?: (dest: string) => void) {
  const f = {
    calls: 0,
    fetch: async (_hash: string, dest: string): Promise<string> => {
      f.calls++;
      cpSync(from, dest, { recursive: true });
      after?.(dest);
      return dest;
    },
  };
  return f;
}

async function failure(p: Promise<unknown>): Promise<PackageError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof PackageError) return err;
  throw new Error(`expected a PackageError, got ${String(err)}`);
}

const entries = (dir: string): string[] => readdirSync(dir).sort();

describe('VerifiedPackageStore.add (the controller side)', () => {
  it('verifies a package and holds a verified copy under its manifest hash', async () => {
    const { dir, store } = newStore();
    const v = await store.add(pkg.dir);
    expect(v.manifestHash).toBe(hashOf(pkg));
    expect(v.dir).toBe(join(dir, v.manifestHash));
    for (const f of v.files) expect(f.absolutePath).toBe(join(dir, v.manifestHash, f.path));
    expect(entries(dir)).toEqual([v.manifestHash]);
    expect(entries(v.dir)).toEqual(entries(pkg.dir));
    expect((await store.get(v.manifestHash)).packageId).toBe(v.packageId);
  });

  it('reuses the held copy; a held copy that no longer verifies is removed, and the next add holds it afresh', async () => {
    const { dir, store } = newStore();
    const v = await store.add(pkg.dir);
    expect((await store.add(pkg.dir)).dir).toBe(v.dir);
    writeFileSync(join(v.dir, 'bin', 'run.sh'), 'tampered');
    expect((await failure(store.add(pkg.dir))).code).toBe('file_tampered');
    expect(entries(dir)).toEqual([]);
    expect((await store.add(pkg.dir)).manifestHash).toBe(v.manifestHash);
  });

  it('refuses a package that does not verify, holding nothing', async () => {
    const { dir, store } = newStore();
    expect((await failure(store.add(untrusted.dir))).code).toBe('untrusted_signer');
    expect((await failure(store.add(join(tempDir(), 'missing')))).code).toBe('manifest_invalid');
    expect(entries(dir)).toEqual([]);
  });
});

describe('VerifiedPackageStore.obtain (the host side)', () => {
  it('fetches, verifies and renames into place; the second time uses the held package', async () => {
    const { dir, store } = newStore();
    const f = copying(pkg.dir);
    const first = await store.obtain(hashOf(pkg), f.fetch);
    expect(first.fetched?.ms).toBeGreaterThanOrEqual(0);
    expect(first.verified.dir).toBe(join(dir, hashOf(pkg)));
    for (const file of first.verified.files) expect(existsSync(file.absolutePath)).toBe(true);
    const second = await store.obtain(hashOf(pkg), f.fetch);
    expect(second.fetched).toBeNull();
    expect(f.calls).toBe(1);
    expect(entries(dir)).toEqual([hashOf(pkg)]);
  });

  it('a fetcher that throws leaves nothing behind and its error is passed on', async () => {
    const { dir, store } = newStore();
    const boom = new Error('connection lost');
    const fetch: PackageFetcher = async (_hash, dest) => {
      mkdirSync(dest, { recursive: true });
      writeFileSync(join(dest, 'partial'), 'half a package');
      throw boom;
    };
    await expect(store.obtain(hashOf(pkg), fetch)).rejects.toBe(boom);
    expect(entries(dir)).toEqual([]);
  });

  it('refuses a fetch that wrote elsewhere, a tampered package and another manifest, keeping nothing', async () => {
    const { dir, store } = newStore();
    const elsewhere = join(dir, '..', 'elsewhere');
    const wroteElsewhere: PackageFetcher = async () => {
      cpSync(pkg.dir, elsewhere, { recursive: true });
      return elsewhere;
    };
    expect((await failure(store.obtain(hashOf(pkg), wroteElsewhere))).field).toBe('destDir');
    const tamper = (dest: string) => appendFileSync(join(dest, 'bin', 'run.sh'), 'echo pwned\n');
    expect((await failure(store.obtain(hashOf(pkg), copying(pkg.dir, tamper).fetch))).code).toBe(
      'file_tampered',
    );
    const mismatch = await failure(store.obtain(hashOf(pkg), copying(other.dir).fetch));
    expect([mismatch.code, mismatch.field]).toEqual(['manifest_invalid', 'manifest_hash']);
    expect(entries(dir)).toEqual([]);
  });

  it('checkEnvelope refuses an untrusted or revoked package before any transfer', async () => {
    const revokeAll: RevocationCheck = {
      firstRevoked: () => ({ kind: 'package', ref: hashOf(pkg), reason: 'test' }),
    };
    expect(() => newStore().store.checkEnvelope(readEnvelope(untrusted.dir))).toThrow(
      expect.objectContaining({ code: 'untrusted_signer' }),
    );
    expect(() => newStore(revokeAll).store.checkEnvelope(readEnvelope(pkg.dir))).toThrow(
      expect.objectContaining({ code: 'revoked', field: 'package' }),
    );
    newStore().store.checkEnvelope(readEnvelope(pkg.dir));
  });

  it('remove deletes a held package so the next obtain fetches again', async () => {
    const { dir, store } = newStore();
    const f = copying(pkg.dir);
    await store.obtain(hashOf(pkg), f.fetch);
    store.remove(hashOf(pkg));
    store.remove(hashOf(pkg));
    expect(entries(dir)).toEqual([]);
    expect((await store.obtain(hashOf(pkg), f.fetch)).fetched).not.toBeNull();
    expect(f.calls).toBe(2);
  });
});

// Where the two copies differed (control-plane's PackageStore, host-service's PackageCache).
describe('VerifiedPackageStore: the stricter of both copies', () => {
  it('removes incoming directories a crash left behind, at construction (the controller copy kept them)', () => {
    const { dir } = newStore();
    mkdirSync(join(dir, `.incoming-${'a'.repeat(64)}-000000000000`, 'bin'), { recursive: true });
    mkdirSync(join(dir, '.incoming-1f2e3d4c5b6a'));
    new VerifiedPackageStore({ dir, anchors, revocations: NO_REVOCATIONS });
    expect(entries(dir)).toEqual([]);
  });

  it('get refuses a held directory that holds another package than its name (the controller copy served it)', async () => {
    const { dir, store } = newStore();
    await store.add(other.dir);
    renameSync(join(dir, hashOf(other)), join(dir, hashOf(pkg)));
    const err = await failure(store.get(hashOf(pkg)));
    expect([err.code, err.field]).toEqual(['manifest_invalid', 'manifest_hash']);
  });

  it('refuses a package of another kind, by add and by obtain (the host copy took any kind)', async () => {
    interface BlobBody {
      readonly files: { path: string; size: number; blake3: string }[];
    }
    const blob: KindDefinition<BlobBody> = {
      kind: 'blob',
      bodySchema: z.strictObject({
        files: z.array(z.strictObject({ path: z.string(), size: z.int(), blake3: z.string() })),
      }),
      files: (body) => body.files,
    };
    const kinds = defaultKindRegistry().register(blob);
    const dir = join(tempDir(), 'blob');
    roots.push(dir);
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), 'a');
    const env = signEnvelope(
      {
        schema: PACKAGE_SCHEMA,
        kind: 'blob',
        body: { files: [{ path: 'a.txt', size: 1, blake3: blake3Hex(utf8('a')) }] },
        signatures: [],
      },
      keys,
    );
    writeFileSync(join(dir, ENVELOPE_FILE), encodeEnvelope(env));
    const { store } = newStore(NO_REVOCATIONS, kinds);
    const byAdd = await failure(store.add(dir));
    expect([byAdd.code, byAdd.field]).toEqual(['manifest_invalid', 'kind']);
    const hash = readEnvelope(dir, { kinds }).manifestHash;
    const byObtain = await failure(store.obtain(hash, copying(dir).fetch));
    expect([byObtain.code, byObtain.field]).toEqual(['manifest_invalid', 'kind']);
    expect(entries(store.dir)).toEqual([]);
  });

  it('refuses a manifest hash that is not 64 lower-case hex characters before building a path (the host copy joined any string)', async () => {
    const { store } = newStore();
    const f = copying(pkg.dir);
    for (const h of ['AB'.repeat(32), 'ab', '', '../../etc', `${'ab'.repeat(32)}/..`]) {
      expect(() => store.pathOf(h)).toThrow(
        expect.objectContaining({ code: 'manifest_invalid', field: 'manifest_hash' }),
      );
      expect((await failure(store.obtain(h, f.fetch))).field).toBe('manifest_hash');
      expect((await failure(store.get(h))).field).toBe('manifest_hash');
      expect(store.has(h)).toBe(false);
    }
    expect(f.calls).toBe(0);
    const missing = await failure(store.get('ab'.repeat(32)));
    expect([missing.code, missing.field]).toEqual(['package_missing', 'manifest_hash']);
  });
});
