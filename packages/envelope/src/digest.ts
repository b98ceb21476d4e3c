import { createHash } from 'node:crypto';
import { createBLAKE3, type IHasher } from 'hash-wasm';
import { toHex } from './bytes.js';

// hash-wasm needs one asynchronous WebAssembly instantiation; after it, hashing is synchronous.
const oneShot: IHasher = await createBLAKE3();

/** BLAKE3-256 of `data`. */
export function blake3(data: Uint8Array): Uint8Array {
  oneShot.init();
  oneShot.update(data);
  return oneShot.digest('binary');
}

/** BLAKE3-256 of `data` as lower-case hex. */
export function blake3Hex(data: Uint8Array): string {
  oneShot.init();
  oneShot.update(data);
  return oneShot.digest('hex');
}

/** SHA-256 of `data`. */
export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(data).digest());
}

/** SHA-256 of `data` as lower-case hex. */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** An incremental BLAKE3 hasher: feed it pieces, then take the digest once. */
export interface Blake3Hasher {
  /** Adds bytes; returns the hasher so calls chain. */
  update(data: Uint8Array): Blake3Hasher;
  /** Finishes and returns the 32-byte digest. The hasher cannot be used afterwards. */
  digest(): Uint8Array;
  /** Finishes and returns the digest as hex. The hasher cannot be used afterwards. */
  digestHex(): string;
}

/**
 * Creates a streaming BLAKE3 hasher (for files and pieces too large to hold at once). Each hasher owns
 * its own WebAssembly state, so call this once per stream, not per chunk.
 */
export async function createBlake3(): Promise<Blake3Hasher> {
  const h = await createBLAKE3();
  h.init();
  let done = false;
  const finish = (): void => {
    if (done) throw new TypeError('BLAKE3 hasher already finished');
    done = true;
  };
  const api: Blake3Hasher = {
    update(data) {
      if (done) throw new TypeError('BLAKE3 hasher already finished');
      h.update(data);
      return api;
    },
    digest() {
      finish();
      return h.digest('binary');
    },
    digestHex() {
      finish();
      return toHex(h.digest('binary'));
    },
  };
  return api;
}
