import { createPublicKey, randomBytes } from 'node:crypto';
import { BoundedCache, bytesKey } from './bounded-cache.js';
import { fromHex, isBytes, toHex } from './bytes.js';
import { sha256Hex } from './digest.js';
import { publicKeyFromSecret } from './ed25519/sign.js';
import { EnvelopeError } from './errors.js';
import { NODE_ID_HEX_LENGTH } from './node-id-length.js';

/** An Ed25519 key pair: a 32-byte secret key (RFC 8032 seed) and its 32-byte public key. */
export interface KeyPair {
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

export { NODE_ID_HEX_LENGTH } from './node-id-length.js';

/** Generates a key pair from the operating system's random source. */
export function generateKeyPair(): KeyPair {
  const secretKey = new Uint8Array(randomBytes(32));
  return { secretKey, publicKey: publicKeyFromSecret(secretKey) };
}

/** The key pair of a 32-byte secret key. */
export function keyPairFromSecret(secretKey: Uint8Array): KeyPair {
  return { secretKey, publicKey: publicKeyFromSecret(secretKey) };
}

// Every signed call derives the node id of both keys (signer and verifier side): remember the ids
// of the most recently seen keys instead of hashing the same 32 bytes again.
const NODE_ID_CACHE_LIMIT = 1024;
const nodeIds = new BoundedCache<string, string>(NODE_ID_CACHE_LIMIT);

/**
 * A node's id: the first 32 hex characters (128 bits) of SHA-256 of its public key. Long enough that
 * nobody can grind a key that collides with another node's id.
 */
export function nodeIdFromPublicKey(publicKey: Uint8Array): string {
  if (!isBytes(publicKey, 32)) throw new TypeError('publicKey must be 32 bytes');
  const id = bytesKey(publicKey);
  let nodeId = nodeIds.get(id);
  if (nodeId === undefined) {
    nodeId = sha256Hex(publicKey).slice(0, NODE_ID_HEX_LENGTH);
    nodeIds.set(id, nodeId);
  }
  return nodeId;
}

/** True when `value` has the form of a node id (32 lower-case hex characters). */
export function isNodeId(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{32}$/.test(value);
}

const SPKI_ED25519_PREFIX = '302a300506032b6570032100';

/**
 * Parses a public key written as 64 hex characters or as a PEM `PUBLIC KEY` (SPKI) block. Throws
 * `EnvelopeError` with code `invalid_public_key` otherwise.
 */
export function parsePublicKey(text: string): Uint8Array {
  const t = typeof text === 'string' ? text.trim() : '';
  if (/^[0-9a-fA-F]{64}$/.test(t)) return fromHex(t.toLowerCase(), 32);
  if (t.startsWith('-----BEGIN PUBLIC KEY-----')) {
    try {
      const der = createPublicKey({ key: t, format: 'pem' }).export({ format: 'der', type: 'spki' });
      const hex = der.toString('hex');
      if (hex.length === 88 && hex.startsWith(SPKI_ED25519_PREFIX)) return fromHex(hex.slice(24), 32);
    } catch {
      // fall through to the refusal below
    }
    throw new EnvelopeError('invalid_public_key', 'PEM block is not an Ed25519 public key');
  }
  throw new EnvelopeError('invalid_public_key', 'expected 64 hex characters or a PEM Ed25519 public key');
}

/** Writes a public key as a PEM `PUBLIC KEY` (SPKI) block. */
export function publicKeyToPem(publicKey: Uint8Array): string {
  if (!isBytes(publicKey, 32)) throw new TypeError('publicKey must be 32 bytes');
  const der = Buffer.from(SPKI_ED25519_PREFIX + toHex(publicKey), 'hex');
  // cast: KeyObject.export with format 'pem' returns a string
  return createPublicKey({ key: der, format: 'der', type: 'spki' }).export({
    format: 'pem',
    type: 'spki',
  }) as string;
}
