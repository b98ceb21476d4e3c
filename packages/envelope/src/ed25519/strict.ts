/**
 * Encoding checks of strict RFC 8032 verification that both backends apply before any curve
 * arithmetic, so that they agree byte for byte on which inputs are even eligible.
 */

import { toHex } from '../bytes.js';

/** The order of the Ed25519 base point, L = 2^252 + 27742317777372353535851937790883648493. */
export const GROUP_ORDER: bigint = 2n ** 252n + 27742317777372353535851937790883648493n;

/** Reads bytes as a little-endian unsigned integer (scalars of RFC 8032). */
export function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number);
  return n;
}

/** True when the scalar half of a signature (bytes 32..64) is canonical: S < L (RFC 8032 5.1.7, step 1). */
export function isCanonicalScalar(s: Uint8Array): boolean {
  // Fast path: any S whose top byte is below 0x10 is below 2^252 < L.
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  if ((s[31] as number) < 0x10) return true;
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  if ((s[31] as number) > 0x10) return false;
  return littleEndian(s) < GROUP_ORDER;
}

/**
 * True when a 32-byte point encoding is canonical: the y coordinate is below p, and the sign bit is not
 * set for the two points whose x is zero (y = 1 and y = p - 1), which RFC 8032 5.1.3 makes undecodable.
 * Whether y is on the curve is left to the backend's decoder. Works on bytes, without big integers.
 */
export function isCanonicalPointEncoding(p: Uint8Array): boolean {
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  const last = p[31] as number;
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  const first = p[0] as number;
  let middleAllFF = true;
  let middleAllZero = true;
  for (let i = 1; i < 31; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const b = p[i] as number;
    if (b !== 0xff) middleAllFF = false;
    if (b !== 0) middleAllZero = false;
  }
  // p = 2^255 - 19 is ed ff .. ff 7f in little-endian; y >= p only just below 2^255.
  if ((last & 0x7f) === 0x7f && middleAllFF && first >= 0xed) return false;
  if ((last & 0x80) !== 0) {
    if (first === 0x01 && middleAllZero && last === 0x80) return false; // y = 1, x = 0, sign 1
    if (first === 0xec && middleAllFF && last === 0xff) return false; // y = p - 1, x = 0, sign 1
  }
  return true;
}

// The eight points of small order (the torsion subgroup), in their canonical encodings. Computed as
// [i]T for a point T of order 8; the test recomputes them with @noble/curves.
const SMALL_ORDER_ENCODINGS: ReadonlySet<string> = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
]);

/**
 * True when a 32-byte encoding is one of the eight points of small order. Such a public key is
 * refused by `verify` on every backend (as libsodium does): with the identity as key, `(R = identity,
 * S = 0)` satisfies the equation for every message, so anyone could sign as that node.
 */
export function isSmallOrderEncoding(p: Uint8Array): boolean {
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  const first = p[0] as number;
  if (first !== 0x00 && first !== 0x01 && first !== 0x26 && first !== 0xc7 && first !== 0xec) return false;
  return SMALL_ORDER_ENCODINGS.has(toHex(p.subarray(0, 32)));
}
