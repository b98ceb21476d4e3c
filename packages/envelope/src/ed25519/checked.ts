import { isBytes } from '../bytes.js';
import type { Ed25519Backend } from './backend.js';
import { isSmallOrderEncoding } from './strict.js';

function requireBytes(name: string, value: unknown, length?: number): asserts value is Uint8Array {
  if (!isBytes(value)) throw new TypeError(`${name} must be a Uint8Array`);
  if (length !== undefined && value.length !== length) {
    throw new TypeError(`${name} must be ${length} bytes, got ${value.length}`);
  }
}

/**
 * Signs `message` with a 32-byte secret key on `backend`, after checking the argument types. Throws a
 * TypeError for malformed arguments. (`sign` is this with the default backend.)
 */
export function checkedSign(backend: Ed25519Backend, secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  requireBytes('secretKey', secretKey, 32);
  requireBytes('message', message);
  return backend.sign(secretKey, message);
}

/**
 * Strict RFC 8032 verification on `backend`, refusing the eight small-order public keys first. False
 * for an invalid signature; a TypeError when an argument is not a Uint8Array of the right length.
 */
export function checkedVerify(
  backend: Ed25519Backend,
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  requireBytes('publicKey', publicKey, 32);
  requireBytes('message', message);
  requireBytes('signature', signature, 64);
  if (isSmallOrderEncoding(publicKey)) return false;
  return backend.verify(publicKey, message, signature);
}

/** The 32-byte public key of a 32-byte secret key, on `backend`. TypeError for a malformed key. */
export function checkedPublicKey(backend: Ed25519Backend, secretKey: Uint8Array): Uint8Array {
  requireBytes('secretKey', secretKey, 32);
  return backend.publicKeyFromSecret(secretKey);
}
