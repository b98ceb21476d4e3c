// The on-disk parts of the content store (internal): the pins file and the streaming copy of a file
// into a temporary object.
import { closeSync, constants, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createBlake3, HEX64_RE, parseJson, readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { z } from 'zod';
import { PackageError } from './errors.js';

/** The file, under the store root, listing the pinned objects. */
export const PINS_FILE = 'pins.json';

const PINS_SCHEMA = 'heddle.content-pins.v1';

const PinsSchema = z.strictObject({
  schema: z.literal(PINS_SCHEMA),
  pins: z.array(z.string().regex(HEX64_RE)),
});

/** The pinned hashes recorded under `root` (none when the file is absent). Malformed: `store_invalid`. */
export function loadPins(root: string): string[] {
  const path = join(root, PINS_FILE);
  let text: string;
  try {
    text = readTextBounded(path, 16 * 1024 * 1024);
  } catch {
    return [];
  }
  try {
    return PinsSchema.parse(parseJson(text)).pins;
  } catch (err) {
    throw new PackageError('store_invalid', `${path} is malformed`, { field: PINS_FILE, cause: err });
  }
}

/** Records the pinned hashes under `root`, crash-safely (sorted, so the file is deterministic). */
export function savePins(root: string, pins: Iterable<string>): void {
  const sorted = [...pins].sort();
  writeFileAtomic(join(root, PINS_FILE), `${JSON.stringify({ schema: PINS_SCHEMA, pins: sorted })}\n`);
}

/**
 * Copies the file at `from` (not following a symbolic link at the last segment) to a new file `to`
 * (created exclusively, mode 0644, fsynced), hashing while copying. Returns the BLAKE3 and size. The
 * caller removes `to` on failure.
 */
export async function copyHashing(from: string, to: string): Promise<{ hash: string; size: number }> {
  const hasher = await createBlake3();
  const input = openSync(from, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  let size = 0;
  try {
    const out = openSync(to, 'wx', 0o644);
    try {
      const buffer = Buffer.allocUnsafe(1024 * 1024);
      for (;;) {
        const n = readSync(input, buffer, 0, buffer.length, size);
        if (n === 0) break;
        const chunk = buffer.subarray(0, n);
        hasher.update(chunk);
        let off = 0;
        while (off < n) off += writeSync(out, chunk, off, n - off);
        size += n;
      }
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
  } finally {
    closeSync(input);
  }
  return { hash: hasher.digestHex(), size };
}
