import { closeSync, fstatSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errnoCode, HeddleError } from './errors.js';

/**
 * Reads a whole file, but never more than `maxBytes`: at most `maxBytes + 1` bytes are read (in
 * chunks, into a buffer that grows as data arrives), so a device (`/dev/zero`), a FIFO or a `/proc`
 * file whose size says 0 cannot make the caller read forever or allocate without bound. Throws
 * `HeddleError` `file_too_large` (naming the path and the limit) when the file holds more, and a
 * directory as `EISDIR`; other I/O errors are thrown as they are (with their errno `code`).
 */
export function readFileBounded(path: string, maxBytes: number): Buffer {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw new RangeError('maxBytes must be a safe integer >= 0');
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) {
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), {
        code: 'EISDIR',
        path,
      });
    }
    if (st.isFile() && st.size > maxBytes) throw tooLarge(path, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    const limit = maxBytes + 1;
    while (total < limit) {
      const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, limit - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
      total += n;
    }
    if (total > maxBytes) throw tooLarge(path, maxBytes);
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** {@link readFileBounded} decoded as UTF-8. */
export function readTextBounded(path: string, maxBytes: number): string {
  return readFileBounded(path, maxBytes).toString('utf8');
}

function tooLarge(path: string, maxBytes: number): HeddleError {
  return new HeddleError(
    'file_too_large',
    `${path} holds more than ${maxBytes} bytes (the limit for this file)`,
  );
}

/**
 * Creates a directory and its missing parents (like `mkdir -p`), one level at a time, and fails with
 * the real error instead of looping: Node's `mkdirSync(path, {recursive: true})` spins forever at
 * 100% CPU on a path under `/proc` (mkdir answers ENOENT although the parent exists). Throws the
 * errno error of the first level that cannot be created (`ENOENT`, `EACCES`, `EROFS`, `ENOTDIR`,
 * `ENOSPC`, ...). `mode` applies to the directories it creates.
 */
export function makeDirs(path: string, mode = 0o777): void {
  const target = resolve(path);
  const missing: string[] = [];
  let dir = target;
  for (;;) {
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(dir);
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
    }
    if (st !== undefined) {
      if (!st.isDirectory()) {
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), {
          code: 'ENOTDIR',
          path: dir,
        });
      }
      break;
    }
    missing.push(dir);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const d = missing[i] as string;
    try {
      mkdirSync(d, { mode });
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST' || !statSync(d).isDirectory()) throw err;
    }
  }
}
