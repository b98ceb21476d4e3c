import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { blake3Hex, createBlake3 } from '@heddle/envelope';
import type { PieceMap } from './pieces.js';

/**
 * What identifies one state of a file's content without reading it: device, inode, size, and the
 * modification and change times in nanoseconds. Any write to the file moves `mtime` and `ctime`;
 * `ctime` cannot be set back by a process (`utimes` sets it to now), so an unchanged stamp means the
 * content was not changed through the file system since the stamp was taken.
 */
export interface FileStamp {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

/** The stamp of `stats` (from a `bigint: true` stat). */
export function stampOf(stats: BigIntStats): FileStamp {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

interface Entry {
  readonly stamp: FileStamp;
  readonly blake3: string;
  readonly maps: Map<number, PieceMap>;
}

/** Default number of files a {@link HashedContentCache} remembers: 4,096. */
export const DEFAULT_HASH_CACHE_FILES = 4096;

/**
 * The hashes of files hashed earlier, by absolute path and {@link FileStamp}: BLAKE3 of the content
 * and, when they were computed, piece maps. A lookup with another stamp misses (and forgets the old
 * entry), so a file changed since is hashed again. Least recently used entries beyond `maxFiles` are
 * forgotten. A controller's package store keeps one, so that a package is hashed once when it is added
 * and its piece maps are served from memory afterwards.
 */
export class HashedContentCache {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;

  constructor(maxFiles: number = DEFAULT_HASH_CACHE_FILES) {
    this.#max = Math.max(1, Math.floor(maxFiles));
  }

  /** Number of files remembered. */
  get size(): number {
    return this.#entries.size;
  }

  /** The BLAKE3 (hex) remembered for `path` in the state `stamp`, or undefined. */
  contentHash(path: string, stamp: FileStamp): string | undefined {
    return this.#get(path, stamp)?.blake3;
  }

  /** The piece map of `path` in the state `stamp` at `pieceSize`, or undefined. */
  pieceMap(path: string, stamp: FileStamp, pieceSize: number): PieceMap | undefined {
    return this.#get(path, stamp)?.maps.get(pieceSize);
  }

  /** Remembers that `path` in the state `stamp` hashes to `blake3` (and has `map`, when given). */
  remember(path: string, stamp: FileStamp, blake3: string, map?: PieceMap): void {
    const old = this.#entries.get(path);
    const maps =
      old !== undefined && sameStamp(old.stamp, stamp) && old.blake3 === blake3 ? old.maps : new Map();
    if (map !== undefined) maps.set(map.pieceSize, map);
    this.#entries.delete(path);
    this.#entries.set(path, { stamp, blake3, maps });
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  /** Forgets every file under `dir` (a removed package). */
  forgetUnder(dir: string): void {
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const path of [...this.#entries.keys()]) if (path.startsWith(prefix)) this.#entries.delete(path);
  }

  /** Re-keys every file under `from` to the same relative path under `to` (a renamed directory). */
  moveUnder(from: string, to: string): void {
    const prefix = from.endsWith('/') ? from : `${from}/`;
    const target = to.endsWith('/') ? to : `${to}/`;
    for (const [path, entry] of [...this.#entries]) {
      if (!path.startsWith(prefix)) continue;
      this.#entries.delete(path);
      this.#entries.set(target + path.slice(prefix.length), entry);
    }
  }

  #get(path: string, stamp: FileStamp): Entry | undefined {
    const entry = this.#entries.get(path);
    if (entry === undefined) return undefined;
    if (!sameStamp(entry.stamp, stamp)) {
      this.#entries.delete(path);
      return undefined;
    }
    this.#entries.delete(path); // most recently used last
    this.#entries.set(path, entry);
    return entry;
  }
}

/**
 * The cache a {@link VerifiedPackageStore} and a `DirPackageSource` use unless given another: one per
 * process, so that the piece maps a controller's store computed when it added a package are the ones
 * its package sources serve.
 */
export const sharedHashCache: HashedContentCache = new HashedContentCache();

/**
 * The piece map of an open file in one read pass from offset 0 (piece hashes and the content hash
 * together), reading at most `maxBytes + 1` bytes; `size` says how many were read.
 */
export async function pieceMapOfHandle(
  handle: FileHandle,
  pieceSize: number,
  maxBytes: number = Number.MAX_SAFE_INTEGER,
): Promise<{ readonly map: PieceMap; readonly size: number }> {
  const whole = await createBlake3();
  const buffers = [Buffer.allocUnsafe(pieceSize), Buffer.allocUnsafe(pieceSize)] as const;
  const limit = maxBytes + 1;
  const pieceHashes: string[] = [];
  const readAt = async (i: 0 | 1, at: number): Promise<number> => {
    let filled = 0;
    while (filled < pieceSize && at + filled < limit) {
      const want = Math.min(pieceSize - filled, limit - at - filled);
      const { bytesRead } = await handle.read(buffers[i], filled, want, at + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled;
  };
  let size = 0;
  let current: 0 | 1 = 0;
  let pending = readAt(0, 0);
  for (;;) {
    const n = await pending;
    if (n === 0) break;
    const next: 0 | 1 = current === 0 ? 1 : 0;
    // The next piece is read (in the thread pool) while this one is hashed; a short piece is the last.
    pending = n < pieceSize ? Promise.resolve(0) : readAt(next, size + n);
    const piece = buffers[current].subarray(0, n);
    whole.update(piece);
    pieceHashes.push(blake3Hex(piece));
    size += n;
    current = next;
  }
  return { map: { pieceSize, totalSize: size, contentHash: whole.digestHex(), pieceHashes }, size };
}
