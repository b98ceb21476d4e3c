import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { BoundedCache, bytesKey } from '../bounded-cache.js';
import type { Ed25519Backend } from './backend.js';
import { isCanonicalPointEncoding, isCanonicalScalar } from './strict.js';

// DER prefixes that wrap a raw 32-byte Ed25519 key as SPKI (public) or PKCS#8 (secret).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

// Building a KeyObject costs about as much as a verification, and a node talks to few peers: keep
// the most recently used ones (null for an encoding that is not a point on the curve).
const CACHE_LIMIT = 1024;
const publicKeys = new BoundedCache<string, KeyObject | null>(CACHE_LIMIT);

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
