import { createHash } from 'node:crypto';
import { createBLAKE3, type IHasher } from 'hash-wasm';
import { type Blake3Backend, loadNativeBlake3 } from './blake3-native.js';
import { toHex } from './bytes.js';

// hash-wasm needs one asynchronous WebAssembly instantiation; after it, hashing is synchronous.
const oneShot: IHasher = await createBLAKE3();

// The native BLAKE3 (optional dependency) is about 8 times faster than WebAssembly from a few KiB on,
// but a call into it costs more than hashing a short input in WebAssembly (measured: 64 bytes 0.4 us
// WebAssembly against 1.2 us native; 4 KiB 5.5 us against 2.3 us), so short inputs stay in WebAssembly.
const native = loadNativeBlake3();
const NATIVE_FROM_BYTES = 2048;

/** Which implementation hashes large inputs and streams in this process: `native` or `portable`. */
export function blake3Backend(): Blake3Backend {
  return native === undefined ? 'portable' : 'native';
}

/** BLAKE3-256 of `data`. */
export function blake3(data: Uint8Array): Uint8Array {
  if (native !== undefined && data.byteLength >= NATIVE_FROM_BYTES) return native.blake3(data);
  oneShot.init();
  oneShot.update(data);
  return oneShot.digest('binary');
}

/** BLAKE3-256 of `data` as lower-case hex. */
export function blake3Hex(data: Uint8Array): string {
  if (native !== undefined && data.byteLength >= NATIVE_FROM_BYTES) return toHex(native.blake3(data));
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
 * Creates a streaming BLAKE3 hasher (for files and pieces too large to hold at once): native when
 * `blake3Backend()` is `native`, else WebAssembly. Each hasher owns its own state, so call this once
 * per stream, not per chunk.
 */
export async function createBlake3(): Promise<Blake3Hasher> {
  let inner: { update(data: Uint8Array): void; digest(): Uint8Array };
  if (native !== undefined) inner = native.createHasher();
  else {
    const h = await createBLAKE3();
    h.init();
    inner = { update: (data) => void h.update(data), digest: () => h.digest('binary') };
  }
  let done = false;
  const finish = (): Uint8Array => {
    if (done) throw new TypeError('BLAKE3 hasher already finished');
    done = true;
    return inner.digest();
  };
  const api: Blake3Hasher = {
    update(data) {
      if (done) throw new TypeError('BLAKE3 hasher already finished');
      inner.update(data);
      return api;
    },
    digest: finish,
    digestHex: () => toHex(finish()),
  };
  return api;
}
