import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import type { Ed25519Backend } from './backend.js';
import { isCanonicalPointEncoding, isCanonicalScalar } from './strict.js';

// DER prefixes that wrap a raw 32-byte Ed25519 key as SPKI (public) or PKCS#8 (secret).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

// Building a KeyObject costs about as much as a verification, and a node talks to few peers: cache.
const CACHE_LIMIT = 1024;
const publicKeys = new Map<string, KeyObject | null>();

function publicKeyObject(raw: Uint8Array): KeyObject | null {
  const id = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
  const hit = publicKeys.get(id);
  if (hit !== undefined) return hit;
  let key: KeyObject | null;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    key = null; // not a point on the curve
  }
  if (publicKeys.size >= CACHE_LIMIT) publicKeys.delete(publicKeys.keys().next().value as string);
  publicKeys.set(id, key);
  return key;
}

// A node signs with one or two keys; keep their KeyObjects rather than rebuilding them per signature.
const SECRET_CACHE_LIMIT = 8;
const secretKeys = new Map<string, KeyObject>();

function secretKeyObject(seed: Uint8Array): KeyObject {
  const id = Buffer.from(seed.buffer, seed.byteOffset, seed.byteLength).toString('latin1');
  let key = secretKeys.get(id);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    if (secretKeys.size >= SECRET_CACHE_LIMIT) secretKeys.delete(secretKeys.keys().next().value as string);
    secretKeys.set(id, key);
  }
  return key;
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
