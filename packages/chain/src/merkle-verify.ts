import { equalBytes, fromHex, isBytes, isHex, toHex } from '@heddle/envelope';
import { EMPTY_MERKLE_ROOT, MERKLE_HASH_LENGTH, merkleLeafHash, merkleNodeHash } from './merkle.js';

/** A 32-byte hash given as bytes or as 64 lower-case hex characters. */
export type HashLike = string | Uint8Array;

function toBytes(h: unknown): Uint8Array | null {
  if (isBytes(h, MERKLE_HASH_LENGTH)) return h;
  if (isHex(h, MERKLE_HASH_LENGTH)) return fromHex(h);
  return null;
}

function toPath(proof: unknown): Uint8Array[] | null {
  if (!Array.isArray(proof) || proof.length > 128) return null;
  const out: Uint8Array[] = [];
  for (const p of proof) {
    const b = toBytes(p);
    if (b === null) return null;
    out.push(b);
  }
  return out;
}

const isSize = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const odd = (n: number): boolean => n % 2 === 1;
const isPowerOfTwo = (n: number): boolean => n > 0 && 2 ** Math.round(Math.log2(n)) === n;
const half = (n: number): number => Math.floor(n / 2);

/**
 * Verifies an RFC 6962 / RFC 9162 (section 2.1.3.2) inclusion proof with BLAKE3 hashing: that `leaf`
 * (the leaf data, in the chain the event hash) is at `index` in the tree of `size` leaves whose root
 * is `root`. Needs nothing but its arguments. Returns false for any invalid or malformed input; never
 * throws.
 */
export function verifyInclusion(
  leaf: HashLike,
  index: number,
  size: number,
  proof: readonly HashLike[],
  root: HashLike,
): boolean {
  const leafData = toBytes(leaf);
  const rootBytes = toBytes(root);
  const path = toPath(proof);
  if (leafData === null || rootBytes === null || path === null) return false;
  if (!isSize(index) || !isSize(size) || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = merkleLeafHash(leafData);
  for (const p of path) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = merkleNodeHash(p, r);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = merkleNodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(r, rootBytes);
}

/**
 * Verifies an RFC 6962 / RFC 9162 (section 2.1.4.2) consistency proof with BLAKE3 hashing: that the
 * tree of `size2` leaves with root `root2` extends the tree of `size1` leaves with root `root1` (the
 * log only grew). Needs nothing but its arguments. Equal sizes need an empty proof and equal roots;
 * size1 0 needs an empty proof and root1 the empty-tree root. Returns false for any invalid or
 * malformed input; never throws.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  root1: HashLike,
  root2: HashLike,
  proof: readonly HashLike[],
): boolean {
  const r1 = toBytes(root1);
  const r2 = toBytes(root2);
  const path = toPath(proof);
  if (r1 === null || r2 === null || path === null) return false;
  if (!isSize(size1) || !isSize(size2) || size1 > size2) return false;
  if (size1 === size2) return path.length === 0 && equalBytes(r1, r2);
  if (size1 === 0) return path.length === 0 && equalBytes(r1, EMPTY_MERKLE_ROOT);
  if (path.length === 0) return false;
  // If size1 is a power of two, the old root itself is the first node of the path.
  const nodes = isPowerOfTwo(size1) ? [r1, ...path] : path;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
  let fr = nodes[0] as Uint8Array;
  let sr = fr;
  for (let i = 1; i < nodes.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const c = nodes[i] as Uint8Array;
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = merkleNodeHash(c, fr);
      sr = merkleNodeHash(c, sr);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = merkleNodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(fr, r1) && equalBytes(sr, r2);
}

/**
 * The Merkle root (64 hex) over `leaves` (leaf data, in the chain the event hashes in seq order),
 * computed directly: for third parties holding the events, and for tests.
 */
export function merkleRoot(leaves: readonly HashLike[]): string {
  const hashes = leaves.map((l, i) => {
    const b = toBytes(l);
    if (b === null) throw new TypeError(`leaf ${i} is not a 32-byte hash`);
    return merkleLeafHash(b);
  });
  if (hashes.length === 0) return toHex(EMPTY_MERKLE_ROOT);
  // Fold the perfect subtrees left to right (a compact range), then combine them right to left.
  const stack: { hash: Uint8Array; size: number }[] = [];
  for (const h of hashes) {
    let node = { hash: h, size: 1 };
    // cast: the stack is not empty here (checked by the loop)
    while (stack.length > 0 && (stack[stack.length - 1] as { size: number }).size === node.size) {
      // cast: the stack is not empty here (checked by the loop)
      const left = stack.pop() as { hash: Uint8Array; size: number };
      node = { hash: merkleNodeHash(left.hash, node.hash), size: node.size * 2 };
    }
    stack.push(node);
  }
  // cast: the stack is not empty here (checked by the loop)
  let acc = (stack.pop() as { hash: Uint8Array }).hash;
  // cast: the stack is not empty here (checked by the loop)
  while (stack.length > 0) acc = merkleNodeHash((stack.pop() as { hash: Uint8Array }).hash, acc);
  return toHex(acc);
}
