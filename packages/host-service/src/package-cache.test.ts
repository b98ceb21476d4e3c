import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { toHex } from '@heddle/envelope';
import { PackageError, RevocationList, TrustAnchors } from '@heddle/package';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PackageCache, type PackageFetcher } from './package-cache.js';
import { RevocationHolder } from './revocation-holder.js';
import {
  type BuiltPackage,
  buildPackage,
  helloPackage,
  helloSource,
  operatorKeys,
  publisherKeys,
  strangerKeys,
  tempDir,
} from './test-fixtures.js';

const anchors = new TrustAnchors([
  { id: 'publisher', role: 'publisher', publicKey: toHex(publisherKeys.publicKey) },
]);

let pkg: BuiltPackage;
let other: BuiltPackage;
let untrusted: BuiltPackage;
beforeAll(async () => {
  pkg = await helloPackage();
  other = await buildPackage(helloSource());
  untrusted = await helloPackage(strangerKeys);
});
afterAll(() => {
  for (const p of [pkg, other, untrusted]) rmSync(dirname(p.dir), { recursive: true, force: true });
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A cache in a fresh directory. */
function newCache(revocations: RevocationHolder = new RevocationHolder(RevocationList.empty())) {
  const parent = tempDir('heddle-hs-cache-');
  dirs.push(parent);
  const dir = join(parent, 'packages');
  return { dir, cache: new PackageCache({ dir, anchors, revocations }) };
}

/** A fetcher that copies `from` into the destination (then runs `after` on it), counting calls. */
function copying(from: BuiltPackage, after?: (dest: string) => void) {
  const f = {
    calls: 0,
    fetch: (async (_hash, dest) => {
      f.calls++;
      cpSync(from.dir, dest, { recursive: true });
      after?.(dest);
      return dest;
    }) as PackageFetcher,
  };
  return f;
}

const entries = (dir: string): string[] => readdirSync(dir).sort();
const incoming = (dir: string): string[] => entries(dir).filter((n) => n.startsWith('.incoming-'));

async function packageError(p: Promise<unknown>): Promise<PackageError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof PackageError) return err;
    throw err;
  }
  throw new Error('expected a PackageError');
}

describe('PackageCache housekeeping', () => {
  it('removes stale incoming directories at construction', () => {
    const { dir } = newCache();
    mkdirSync(join(dir, `.incoming-${'a'.repeat(64)}-000000000000`, 'bin'), { recursive: true });
    new PackageCache({ dir, anchors, revocations: new RevocationHolder(RevocationList.empty()) });
    expect(incoming(dir)).toEqual([]);
  });

  it('refuses a fetcher that wrote somewhere else, keeping nothing', async () => {
    const { dir, cache } = newCache();
    const elsewhere = join(dir, '..', 'elsewhere');
    const fetch: PackageFetcher = async () => {
      cpSync(pkg.dir, elsewhere, { recursive: true });
      return elsewhere;
    };
    const err = await packageError(cache.obtain(pkg.manifestHash, fetch));
    expect(err.field).toBe('destDir');
    expect(entries(dir)).toEqual([]);
  });
});

describe('PackageCache', () => {
  it('creates its directory and names a package by its manifest hash', () => {
    const { dir, cache } = newCache();
    expect(existsSync(dir)).toBe(true);
    expect(cache.pathOf(pkg.manifestHash)).toBe(join(dir, pkg.manifestHash));
  });

  it('fetches, verifies and renames a package into <dir>/<manifest hash>', async () => {
    const { dir, cache } = newCache();
    const f = copying(pkg);
    const got = await cache.obtain(pkg.manifestHash, f.fetch);
    expect(f.calls).toBe(1);
    expect(got.fetched).not.toBeNull();
    expect(got.fetched?.ms).toBeGreaterThanOrEqual(0);
    expect(got.verified.manifestHash).toBe(pkg.manifestHash);
    expect(got.verified.kind).toBe('cog');
    expect(got.verified.dir).toBe(join(dir, pkg.manifestHash));
    expect(got.verified.files.length).toBeGreaterThan(0);
    for (const file of got.verified.files) {
      expect(file.absolutePath).toBe(join(dir, pkg.manifestHash, file.path));
      expect(existsSync(file.absolutePath)).toBe(true);
    }
    expect(entries(dir)).toEqual([pkg.manifestHash]);
  });

  it('uses the held package the second time, without fetching', async () => {
    const { dir, cache } = newCache();
    const f = copying(pkg);
    const first = await cache.obtain(pkg.manifestHash, f.fetch);
    const second = await cache.obtain(pkg.manifestHash, f.fetch);
    expect(f.calls).toBe(1);
    expect(second.fetched).toBeNull();
    expect(second.verified.dir).toBe(join(dir, pkg.manifestHash));
    expect(second.verified.packageId).toBe(first.verified.packageId);
    expect(second.verified.files.map((x) => x.absolutePath)).toEqual(
      first.verified.files.map((x) => x.absolutePath),
    );
  });

  it('holds packages side by side', async () => {
    const { dir, cache } = newCache();
    await cache.obtain(pkg.manifestHash, copying(pkg).fetch);
    await cache.obtain(other.manifestHash, copying(other).fetch);
    expect(entries(dir)).toEqual([pkg.manifestHash, other.manifestHash].sort());
  });

  it('a fetcher that throws leaves nothing behind and its error is passed on', async () => {
    const { dir, cache } = newCache();
    const boom = new Error('connection lost');
    const fetch: PackageFetcher = async (_hash, dest) => {
      mkdirSync(dest, { recursive: true });
      writeFileSync(join(dest, 'partial'), 'half a package');
      throw boom;
    };
    await expect(cache.obtain(pkg.manifestHash, fetch)).rejects.toBe(boom);
    expect(incoming(dir)).toEqual([]);
    expect(existsSync(cache.pathOf(pkg.manifestHash))).toBe(false);
    expect(entries(dir)).toEqual([]);
  });

  it('a tampered package is refused (file_tampered) and nothing is kept', async () => {
    const { dir, cache } = newCache();
    const f = copying(pkg, (dest) => appendFileSync(join(dest, 'bin', 'hello.sh'), '\necho pwned\n'));
    const err = await packageError(cache.obtain(pkg.manifestHash, f.fetch));
    expect(err.code).toBe('file_tampered');
    expect(entries(dir)).toEqual([]);
  });

  it('a package signed by an untrusted key is refused (untrusted_signer) and nothing is kept', async () => {
    const { dir, cache } = newCache();
    const err = await packageError(cache.obtain(untrusted.manifestHash, copying(untrusted).fetch));
    expect(err.code).toBe('untrusted_signer');
    expect(entries(dir)).toEqual([]);
  });

  it('a package with another manifest than the one named is refused and nothing is kept', async () => {
    const { dir, cache } = newCache();
    const err = await packageError(cache.obtain(pkg.manifestHash, copying(other).fetch));
    expect(err.code).toBe('manifest_invalid');
    expect(err.field).toBe('manifest_hash');
    expect(entries(dir)).toEqual([]);
  });

  it('remove deletes the held package, so the next obtain fetches again', async () => {
    const { dir, cache } = newCache();
    const f = copying(pkg);
    await cache.obtain(pkg.manifestHash, f.fetch);
    cache.remove(pkg.manifestHash);
    expect(existsSync(cache.pathOf(pkg.manifestHash))).toBe(false);
    expect(entries(dir)).toEqual([]);
    cache.remove(pkg.manifestHash);
    const again = await cache.obtain(pkg.manifestHash, f.fetch);
    expect(f.calls).toBe(2);
    expect(again.fetched).not.toBeNull();
  });

  it('refuses a held package whose file was changed on disk', async () => {
    const { cache } = newCache();
    const f = copying(pkg);
    const got = await cache.obtain(pkg.manifestHash, f.fetch);
    const script = got.verified.files.find((x) => x.path === 'bin/hello.sh');
    expect(script).toBeDefined();
    appendFileSync(script?.absolutePath as string, '\necho changed\n');
    const err = await packageError(cache.obtain(pkg.manifestHash, f.fetch));
    expect(err.code).toBe('file_tampered');
    expect(f.calls).toBe(1);
  });

  it('checks revocations at every verification, held package or not', async () => {
    const holder = new RevocationHolder(RevocationList.empty());
    const { dir, cache } = newCache(holder);
    const f = copying(pkg);
    const got = await cache.obtain(pkg.manifestHash, f.fetch);
    const packageId = got.verified.packageId;
    holder.replace(
      RevocationList.empty().add({ kind: 'package', ref: packageId, revokedAtMs: 1 }, operatorKeys),
    );
    const err = await packageError(cache.obtain(pkg.manifestHash, f.fetch));
    expect(err.code).toBe('revoked');

    cache.remove(pkg.manifestHash);
    const refetch = await packageError(cache.obtain(pkg.manifestHash, f.fetch));
    expect(refetch.code).toBe('revoked');
    expect(entries(dir)).toEqual([]);
  });
});
