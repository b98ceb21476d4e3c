import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
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

/**
 * Streams a file through BLAKE3 without following a symbolic link at the last path segment
 * (`O_NOFOLLOW`). Reads at most `maxBytes + 1` bytes, so a file that grew past its limit is noticed
 * without reading it all. Rejects with the `fs` error when the file cannot be opened.
 */
export async function hashFile(
  path: string,
  maxBytes: number = Number.MAX_SAFE_INTEGER,
): Promise<FileDigest> {
  const handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    const hasher = await createBlake3();
    const buffer = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
    let size = 0;
    for (;;) {
      const want = Math.min(buffer.length, maxBytes + 1 - size);
      if (want <= 0) break;
      const { bytesRead } = await handle.read(buffer, 0, want, size);
      if (bytesRead === 0) break;
      hasher.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
    return { size, blake3: hasher.digestHex() };
  } finally {
    await handle.close();
  }
}
