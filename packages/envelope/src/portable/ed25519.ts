import { isBytes } from '../bytes.js';
import { type DomainTagValue, domainMessage } from '../domain-tag.js';
import { checkedPublicKey, checkedSign, checkedVerify } from '../ed25519/checked.js';
import { nobleBackend } from '../ed25519/noble.js';
import type { KeyPair } from '../keys.js';
import { NODE_ID_HEX_LENGTH } from '../node-id-length.js';
import { sha256Hex } from './digest.js';

/**
 * Strict RFC 8032 verification on the portable `noble` backend: the same accept set as the Node
 * entry's `verify` (tested on the same vectors). False for an invalid signature; a TypeError when an
 * argument is not a Uint8Array of the right length (public key 32, signature 64).
 */
export function verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return checkedVerify(nobleBackend, publicKey, message, signature);
}

/** Signs `message` with a 32-byte secret key on the portable backend; 64-byte signature. */
export function sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return checkedSign(nobleBackend, secretKey, message);
}

/** The 32-byte public key of a 32-byte secret key (portable backend). */
export function publicKeyFromSecret(secretKey: Uint8Array): Uint8Array {
  return checkedPublicKey(nobleBackend, secretKey);
}

/** Verifies a signature over `tag || message` (portable backend); false when invalid. */
export function verifyWithDomain(
  tag: DomainTagValue,
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  return verify(publicKey, domainMessage(tag, message), signature);
}

/** Signs `tag || message` with a 32-byte secret key (portable backend). */
export function signWithDomain(tag: DomainTagValue, secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return sign(secretKey, domainMessage(tag, message));
}

/** The node id of a 32-byte public key: the first 16 bytes of its SHA-256, as hex (portable). */
export function nodeIdFromPublicKey(publicKey: Uint8Array): string {
  if (!isBytes(publicKey, 32)) throw new TypeError('publicKey must be 32 bytes');
  return sha256Hex(publicKey).slice(0, NODE_ID_HEX_LENGTH);
}

/**
 * Generates a key pair from the platform's `crypto.getRandomValues` (browsers, Node, Deno, workers).
 * Throws a TypeError where the platform has no cryptographic random source.
 */
export function generateKeyPair(): KeyPair {
  // cast: WebCrypto is not in the types of every target and may be absent: read as optional
  const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
  if (typeof c?.getRandomValues !== 'function') throw new TypeError('crypto.getRandomValues is unavailable');
  const secretKey = c.getRandomValues(new Uint8Array(32));
  return { secretKey, publicKey: publicKeyFromSecret(secretKey) };
}
