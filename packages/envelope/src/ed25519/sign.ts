import type { Ed25519Backend } from './backend.js';
import { checkedPublicKey, checkedSign, checkedVerify } from './checked.js';
import { nodeBackend } from './native.js';

let current: Ed25519Backend = nodeBackend;

/** The backend `sign`, `verify` and `publicKeyFromSecret` use. `node` by default on Node. */
export function getEd25519Backend(): Ed25519Backend {
  return current;
}

/** Replaces the default backend (for example with `nobleBackend` where `node:crypto` is unavailable). */
export function setEd25519Backend(backend: Ed25519Backend): void {
  current = backend;
}

/**
 * Signs `message` with a 32-byte Ed25519 secret key (the RFC 8032 seed) and returns the 64-byte
 * signature. Throws a TypeError for malformed arguments.
 */
export function sign(
  secretKey: Uint8Array,
  message: Uint8Array,
  backend: Ed25519Backend = current,
): Uint8Array {
  return checkedSign(backend, secretKey, message);
}

/**
 * Verifies an Ed25519 signature with strict RFC 8032 rules (S < L, canonical point encodings,
 * cofactorless equation), and refuses the eight public keys of small order, for which signatures can
 * be made without any secret. Returns false for an invalid signature; throws a TypeError when an
 * argument is not a Uint8Array of the right length (public key 32, signature 64).
 */
export function verify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  backend: Ed25519Backend = current,
): boolean {
  return checkedVerify(backend, publicKey, message, signature);
}

/** Derives the 32-byte public key of a 32-byte secret key. */
export function publicKeyFromSecret(secretKey: Uint8Array, backend: Ed25519Backend = current): Uint8Array {
  return checkedPublicKey(backend, secretKey);
}
