import { cpSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BuildResult } from './build.js';
import { type FileStamp, HashedContentCache, pieceMapOfHandle, stampOf } from './hash-cache.js';
import { VerifiedPackageStore } from './package-store.js';
import { computeFilePieceMap, computePieceMap, DEFAULT_PIECE_SIZE, type PieceMap } from './pieces.js';
import { NO_REVOCATIONS } from './revocation.js';
import { anchorsFor, buildSigned, fixedKeys, sampleSource, tempDir } from './test-fixtures.js';

const keys = fixedKeys(0x31);
const anchors = anchorsFor([keys]);
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A cache that counts what it is told and what it answers (instrumentation, not a stand-in). */
class CountingCache extends HashedContentCache {
  remembered = 0;
  hits = 0;
  override remember(path: string, stamp: FileStamp, blake3: string, map?: PieceMap): void {
    this.remembered++;
    super.remember(path, stamp, blake3, map);
  }
  override contentHash(path: string, stamp: FileStamp): string | undefined {
    const hit = super.contentHash(path, stamp);
    if (hit !== undefined) this.hits++;
    return hit;
  }
}

const stamp = (path: string): FileStamp => stampOf(statSync(path, { bigint: true }));

describe('HashedContentCache', () => {
  it('answers only for the stamp it was told, forgets the least recently used, and follows a rename', () => {
    const dir = tempDir('heddle-hash-cache-');
    roots.push(dir);
    const a = join(dir, 'a');
    writeFileSync(a, 'one');
    const s = stamp(a);
    const cache = new HashedContentCache(2);
    const map = computePieceMap(new Uint8Array(3), DEFAULT_PIECE_SIZE);
    cache.remember(a, s, 'h1', map);
    expect(cache.contentHash(a, s)).toBe('h1');
    expect(cache.pieceMap(a, s, DEFAULT_PIECE_SIZE)).toBe(map);
    expect(cache.pieceMap(a, s, 2 * DEFAULT_PIECE_SIZE)).toBeUndefined();
    // Another stamp (the file changed): a miss, and the old entry is forgotten.
    expect(cache.contentHash(a, { ...s, ctimeNs: s.ctimeNs + 1n })).toBeUndefined();
    expect(cache.contentHash(a, s)).toBeUndefined();
    cache.remember(a, s, 'h1');
    cache.remember('/x/b', s, 'h2');
    cache.contentHash(a, s); // a is now the most recently used
    cache.remember('/x/c', s, 'h3');
    expect(cache.size).toBe(2);
    expect(cache.contentHash('/x/b', s)).toBeUndefined();
    cache.moveUnder('/x', '/y');
    expect(cache.contentHash('/y/c', s)).toBe('h3');
    cache.forgetUnder('/y');
    expect(cache.contentHash('/y/c', s)).toBeUndefined();
  });

  it('pieceMapOfHandle reads once and gives the same map as computeFilePieceMap', async () => {
    const dir = tempDir('heddle-hash-cache-');
    roots.push(dir);
    const file = join(dir, 'f');
    const bytes = new Uint8Array(3 * 16384 + 17).map((_, i) => (i * 31) & 0xff);
    writeFileSync(file, bytes);
    const handle = await open(file, 'r');
    try {
      const { map, size } = await pieceMapOfHandle(handle, 16384);
      expect(size).toBe(bytes.length);
      expect(map).toEqual(await computeFilePieceMap(file, 16384));
      expect((await pieceMapOfHandle(handle, 16384, 100)).size).toBe(101); // stops at maxBytes + 1
    } finally {
      await handle.close();
    }
  });
});

describe('VerifiedPackageStore hashes a held file once', () => {
  let pkg: BuildResult;
  it('add hashes each file once (with its piece map); get does not hash an unchanged file; a changed one is caught', async () => {
    pkg = await buildSigned([keys], sampleSource({ version: '3.0.0' }));
    const root = tempDir('heddle-hash-store-');
    roots.push(root);
    const cache = new CountingCache();
    const store = new VerifiedPackageStore({
      dir: join(root, 'packages'),
      anchors,
      revocations: NO_REVOCATIONS,
      hashCache: cache,
    });
    const held = await store.add(pkg.dir);
    const files = held.files.length;
    expect(files).toBeGreaterThan(0);
    expect(cache.remembered).toBe(files); // one hash pass per file, in the held copy only
    for (const f of held.files) {
      const map = cache.pieceMap(f.absolutePath, stamp(f.absolutePath), DEFAULT_PIECE_SIZE);
      expect(map?.contentHash).toBe(f.blake3);
    }
    for (let i = 0; i < 3; i++) await store.get(held.manifestHash);
    expect(cache.remembered).toBe(files); // nothing hashed again
    expect(cache.hits).toBe(3 * files);
    // A change through the file system (same size, new content) moves the stamp: hashed, and refused.
    const victim = held.files[0]?.absolutePath as string;
    const bytes = readFileSync(victim);
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    writeFileSync(victim, bytes);
    await expect(store.get(held.manifestHash)).rejects.toMatchObject({ code: 'file_tampered' });
  });

  it('a fetch that checked every byte is not hashed again; a plain fetch is', async () => {
    const root = tempDir('heddle-hash-store-');
    roots.push(root);
    const cache = new CountingCache();
    const store = new VerifiedPackageStore({
      dir: join(root, 'packages'),
      anchors,
      revocations: NO_REVOCATIONS,
      hashCache: cache,
    });
    const got = await store.obtain(pkg.package.manifestHash, async (_hash, dest) => {
      cpSync(pkg.dir, dest, { recursive: true });
      return { dir: dest, contentVerified: true };
    });
    expect(got.fetched).not.toBeNull();
    // Recorded (stamps), but nothing hashed: no piece map was computed for them.
    for (const f of got.verified.files) {
      expect(cache.contentHash(f.absolutePath, stamp(f.absolutePath))).toBe(f.blake3);
      expect(cache.pieceMap(f.absolutePath, stamp(f.absolutePath), DEFAULT_PIECE_SIZE)).toBeUndefined();
    }
    // A fetcher that vouches for nothing: the store hashes (and so refuses) what it wrote.
    const other = new VerifiedPackageStore({
      dir: join(root, 'other'),
      anchors,
      revocations: NO_REVOCATIONS,
      hashCache: new HashedContentCache(),
    });
    await expect(
      other.obtain(pkg.package.manifestHash, async (_hash, dest) => {
        cpSync(pkg.dir, dest, { recursive: true });
        const f = join(dest, 'bin', 'run.sh');
        const b = readFileSync(f);
        b[0] = (b[0] ?? 0) ^ 1;
        writeFileSync(f, b);
        return dest;
      }),
    ).rejects.toMatchObject({ code: 'file_tampered' });
  });
});
