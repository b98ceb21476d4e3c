import { constants, readlinkSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { createBlake3 } from '@heddle/envelope';

/** Read size used when hashing files: 1 MiB. */
export const HASH_CHUNK_BYTES: number = 1024 * 1024;

/** What {@link hashFile} measured. */
export interface FileDigest {
  /** Bytes read. Reading stops at `maxBytes + 1`, so a larger value means "more than allowed". */
  readonly size: number;
  /** BLAKE3-256 of the bytes read, hex. */
  readonly blake3: string;
}

const O_NOFOLLOW: number = constants.O_NOFOLLOW ?? 0;

/**
 * Streams a file through BLAKE3 without following a symbolic link at the last path segment
 * (`O_NOFOLLOW`). Reads at most `maxBytes + 1` bytes, so a file that grew past its limit is noticed
 * without reading it all. Rejects with the `fs` error when the file cannot be opened.
 */
export async function hashFile(
  path: string,
  maxBytes: number = Number.MAX_SAFE_INTEGER,
): Promise<FileDigest> {
  const handle = await open(path, constants.O_RDONLY | O_NOFOLLOW);
  try {
    return await hashHandle(handle, maxBytes);
  } finally {
    await handle.close();
  }
}

/**
 * Like {@link hashFile}, on a file already open (read from offset 0). Double-buffered: the next chunk
 * is read (in libuv's thread pool) while the current one is hashed, so the time is about the larger
 * of reading and hashing rather than their sum.
 */
export async function hashHandle(
  handle: FileHandle,
  maxBytes: number = Number.MAX_SAFE_INTEGER,
): Promise<FileDigest> {
  const hasher = await createBlake3();
  const buffers = [Buffer.allocUnsafe(HASH_CHUNK_BYTES), Buffer.allocUnsafe(HASH_CHUNK_BYTES)] as const;
  const limit = maxBytes + 1;
  let size = 0; // bytes hashed so far
  const readAt = async (i: 0 | 1, at: number): Promise<number> => {
    const want = Math.min(HASH_CHUNK_BYTES, limit - at);
    return want <= 0 ? 0 : (await handle.read(buffers[i], 0, want, at)).bytesRead;
  };
  let current: 0 | 1 = 0;
  let pending = readAt(0, 0);
  for (;;) {
    const n = await pending;
    if (n === 0) break;
    const next: 0 | 1 = current === 0 ? 1 : 0;
    const at = size + n;
    pending = readAt(next, at); // until a read returns 0: a short read is not taken as the end
    hasher.update(buffers[current].subarray(0, n));
    size = at;
    current = next;
  }
  return { size, blake3: hasher.digestHex() };
}

/** The identity of a file checked earlier (from `inspectPackagePath`). */
export interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * Opens the package file `realRoot/path` for reading so that what is read is the file that was
 * checked, closing the window between a path check and the read (a directory on the way swapped for a
 * symbolic link in between):
 *
 * - the last segment is opened with `O_NOFOLLOW`;
 * - the open file must be a regular file with the device and inode `expected` names (what
 *   `inspectPackagePath` saw without following links);
 * - where the platform tells which path a descriptor refers to (`/proc/self/fd` on Linux), that path
 *   must lie inside `realRoot` (which must be a real path, without symbolic links).
 *
 * Rejects with an `Error` saying what differed (or the `fs` error); the caller owns the handle.
 */
export async function openPackageFile(
  realRoot: string,
  path: string,
  expected: FileIdentity,
): Promise<FileHandle> {
  const handle = await open(join(realRoot, ...path.split('/')), constants.O_RDONLY | O_NOFOLLOW);
  try {
    const st = await handle.stat({ bigint: true });
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    if (st.dev !== expected.dev || st.ino !== expected.ino) {
      throw new Error(`${path} changed while being verified (not the file that was checked)`);
    }
    const where = descriptorPath(handle.fd);
    if (where !== undefined && !where.startsWith(realRoot + sep)) {
      throw new Error(`${path} resolves outside the package directory (${where})`);
    }
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The path an open descriptor refers to, where the platform says (Linux); otherwise undefined. */
function descriptorPath(fd: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}
