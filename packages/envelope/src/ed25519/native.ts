import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { BoundedCache, bytesKey } from '../bounded-cache.js';
import type { Ed25519Backend } from './backend.js';
import { isCanonicalPointEncoding, isCanonicalScalar } from './strict.js';

// DER prefixes that wrap a raw 32-byte Ed25519 key as SPKI (public) or PKCS#8 (secret).
/** Public keys the Ed25519 verification cache holds by default. */
export const VERIFY_KEY_CACHE_DEFAULT = 1024;
/** The most public keys {@link growVerifyKeyCache} lets the cache hold (about 2 KB each with the key object). */
export const VERIFY_KEY_CACHE_MAX = 262_144;

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

// Building a KeyObject costs about as much as a verification: keep the most recently used ones (null
// for an encoding that is not a point on the curve). A host talks to few peers; a controller verifies
// every node of its fleet, and grows the cache to the fleet (growVerifyKeyCache).
const publicKeys = new BoundedCache<string, KeyObject | null>(VERIFY_KEY_CACHE_DEFAULT);

/**
 * Grows the cache of public keys that Ed25519 verification keeps (parsed `node:crypto` key objects) to
 * hold at least `keys` keys (at most {@link VERIFY_KEY_CACHE_MAX}); it never shrinks below its
 * current size. A process verifying many peers round-robin (a controller and its fleet) calls it with
 * the number of peers: with fewer entries than peers, every verification rebuilds its key (about the
 * cost of a verification). Returns the capacity in force. `RangeError` for a negative or non-integer
 * count.
 */
export function growVerifyKeyCache(keys: number): number {
  if (!Number.isSafeInteger(keys) || keys < 0) throw new RangeError('keys must be a non-negative integer');
  const want = Math.min(VERIFY_KEY_CACHE_MAX, keys);
  if (want > publicKeys.capacity) publicKeys.resize(want);
  return publicKeys.capacity;
}

/** How many public keys the Ed25519 verification cache holds at most now (see {@link growVerifyKeyCache}). */
export function verifyKeyCacheCapacity(): number {
  return publicKeys.capacity;
}

function publicKeyObject(raw: Uint8Array): KeyObject | null {
  const id = bytesKey(raw);
  const hit = publicKeys.get(id);
  if (hit !== undefined) return hit;
  let key: KeyObject | null;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    key = null; // not a point on the curve
  }
  publicKeys.set(id, key);
  return key;
}

// A node signs with one or two keys; keep their KeyObjects rather than rebuilding them per signature.
const SECRET_CACHE_LIMIT = 8;
const secretKeys = new BoundedCache<string, KeyObject>(SECRET_CACHE_LIMIT);

function secretKeyObject(seed: Uint8Array): KeyObject {
  return secretKeys.getOrSet(bytesKey(seed), () =>
    createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }),
  );
}

/**
 * The fast backend on Node: OpenSSL's Ed25519 through `node:crypto`, which checks S < L and uses the
 * cofactorless equation. The canonical-encoding checks it may not make are done first here, so it
 * accepts exactly what the `noble` backend accepts.
 */
export const nodeBackend: Ed25519Backend = {
  name: 'node',
  publicKeyFromSecret(secretKey) {
    const jwk = createPublicKey(secretKeyObject(secretKey)).export({ format: 'jwk' });
    // cast: the JWK export of an Ed25519 public key always has x
    return new Uint8Array(Buffer.from(jwk.x as string, 'base64url'));
  },
  sign(secretKey, message) {
    return new Uint8Array(sign(null, message, secretKeyObject(secretKey)));
  },
  verify(publicKey, message, signature) {
    if (!isCanonicalScalar(signature.subarray(32, 64))) return false;
    if (!isCanonicalPointEncoding(publicKey)) return false;
    const key = publicKeyObject(publicKey);
    if (!key) return false;
    try {
      return verify(null, message, key, signature);
    } catch {
      return false;
    }
  },
};
