import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { toHex } from '../bytes.js';

/**
 * BLAKE3-256 of `data`, in pure JavaScript (`@noble/hashes`): the same digest as the Node entry's
 * WebAssembly `blake3`, with no module-load work and no `node:` import.
 */
export function blake3(data: Uint8Array): Uint8Array {
  return nobleBlake3(data);
}

/** BLAKE3-256 of `data` as lower-case hex (portable). */
export function blake3Hex(data: Uint8Array): string {
  return toHex(nobleBlake3(data));
}

/** SHA-256 of `data`, in pure JavaScript (`@noble/hashes`). */
export function sha256(data: Uint8Array): Uint8Array {
  return nobleSha256(data);
}

/** SHA-256 of `data` as lower-case hex (portable). */
export function sha256Hex(data: Uint8Array): string {
  return toHex(nobleSha256(data));
}
