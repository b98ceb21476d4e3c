import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { concatBytes, equalBytes } from '../bytes.js';
import type { Ed25519Backend } from './backend.js';
import { GROUP_ORDER, isCanonicalPointEncoding, isCanonicalScalar, littleEndian } from './strict.js';

type Point = InstanceType<typeof ed25519.Point>;

function decodePoint(bytes: Uint8Array): Point | undefined {
  if (!isCanonicalPointEncoding(bytes)) return undefined;
  try {
    // zip215 = false: RFC 8032 decoding (rejects y >= p and the non-canonical sign of x = 0).
    return ed25519.Point.fromBytes(bytes, false);
  } catch {
    return undefined;
  }
}

/**
 * The portable backend, built on `@noble/curves` (pure JavaScript: browsers, edge runtimes). Signing
 * is noble's RFC 8032 signing; verification is done here on noble's point arithmetic with the
 * cofactorless equation `encode([S]B - [k]A) == R`, exactly what OpenSSL (the `node` backend) does, so
 * both backends accept the same set of signatures, small-order components included.
 */
export const nobleBackend: Ed25519Backend = {
  name: 'noble',
  publicKeyFromSecret(secretKey) {
    return ed25519.getPublicKey(secretKey);
  },
  sign(secretKey, message) {
    return ed25519.sign(message, secretKey);
  },
  verify(publicKey, message, signature) {
    const rBytes = signature.subarray(0, 32);
    const sBytes = signature.subarray(32, 64);
    if (!isCanonicalScalar(sBytes)) return false;
    const a = decodePoint(publicKey);
    if (!a) return false;
    const k = littleEndian(sha512(concatBytes(rBytes, publicKey, message))) % GROUP_ORDER;
    const s = littleEndian(sBytes);
    const sb = s === 0n ? ed25519.Point.ZERO : ed25519.Point.BASE.multiply(s);
    const ka = k === 0n ? ed25519.Point.ZERO : a.multiplyUnsafe(k);
    return equalBytes(sb.subtract(ka).toBytes(), rBytes);
  },
};
