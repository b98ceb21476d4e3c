import { blake3 } from '@heddle/envelope';

/** Length of every Merkle hash in bytes (BLAKE3-256). */
export const MERKLE_HASH_LENGTH = 32;

const leafBuf = new Uint8Array(1 + MERKLE_HASH_LENGTH);
leafBuf[0] = 0x00;
const nodeBuf = new Uint8Array(1 + 2 * MERKLE_HASH_LENGTH);
nodeBuf[0] = 0x01;

/**
 * RFC 6962 leaf hash with BLAKE3: `BLAKE3(0x00 || data)`. In the chain, `data` is the 32-byte event
 * hash of the event at index `seq`.
 */
export function merkleLeafHash(data: Uint8Array): Uint8Array {
  if (data.length === MERKLE_HASH_LENGTH) {
    leafBuf.set(data, 1);
    return blake3(leafBuf);
  }
  const buf = new Uint8Array(1 + data.length);
  buf.set(data, 1);
  return blake3(buf);
}

/** RFC 6962 interior node hash with BLAKE3: `BLAKE3(0x01 || left || right)`. */
export function merkleNodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  nodeBuf.set(left, 1);
  nodeBuf.set(right, 1 + MERKLE_HASH_LENGTH);
  return blake3(nodeBuf);
}

/** The root of the empty tree: BLAKE3 of no bytes (RFC 6962: MTH({}) = HASH()). */
export const EMPTY_MERKLE_ROOT: Uint8Array = blake3(new Uint8Array(0));

/** The largest power of two strictly less than `n` (n >= 2): RFC 6962's `k`. */
export function largestPowerOfTwoBelow(n: number): number {
  if (n <= 0x80000000) return 2 ** (31 - Math.clz32(n - 1));
  let k = 0x80000000;
  while (k * 2 < n) k *= 2;
  return k;
}

/** A growable list of 32-byte hashes in one buffer (no object per hash). */
class HashList {
  private buf: Uint8Array = new Uint8Array(MERKLE_HASH_LENGTH * 256);
  length = 0;

  push(hash: Uint8Array): void {
    const end = (this.length + 1) * MERKLE_HASH_LENGTH;
    if (end > this.buf.length) {
      const bigger = new Uint8Array(Math.max(end, this.buf.length * 2));
      bigger.set(this.buf.subarray(0, this.length * MERKLE_HASH_LENGTH));
      this.buf = bigger;
    }
    this.buf.set(hash, this.length * MERKLE_HASH_LENGTH);
    this.length++;
  }

  get(i: number): Uint8Array {
    return this.buf.subarray(i * MERKLE_HASH_LENGTH, (i + 1) * MERKLE_HASH_LENGTH);
  }
}

/**
 * An append-only RFC 6962 Merkle tree (BLAKE3) that keeps every complete subtree: level `k` holds
 * the hashes of the aligned perfect subtrees of `2^k` leaves. Appending costs one leaf hash plus one
 * node hash on average; the root at any size, and every proof, takes O(log n) node hashes. Memory is
 * about 64 bytes per leaf.
 */
export class MerkleTree {
  private readonly levels: HashList[] = [new HashList()];

  /** Number of leaves. */
  get size(): number {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    return (this.levels[0] as HashList).length;
  }

  /** Appends a leaf given its data (the event hash); returns the leaf hash. */
  append(data: Uint8Array): Uint8Array {
    const leaf = merkleLeafHash(data);
    this.appendLeafHash(leaf);
    return leaf;
  }

  /** Appends a leaf given its already computed leaf hash. */
  appendLeafHash(leafHash: Uint8Array): void {
    let level = 0;
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    let list = this.levels[0] as HashList;
    list.push(leafHash);
    while (list.length % 2 === 0) {
      const parent = merkleNodeHash(list.get(list.length - 2), list.get(list.length - 1));
      level++;
      let up = this.levels[level];
      if (up === undefined) {
        up = new HashList();
        this.levels.push(up);
      }
      up.push(parent);
      list = up;
    }
  }

  /** The leaf hash at `index`. */
  leafHash(index: number): Uint8Array {
    this.checkSize(index + 1);
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    return (this.levels[0] as HashList).get(index).slice();
  }

  /** The root of the tree made of the first `size` leaves (default: all). */
  root(size: number = this.size): Uint8Array {
    this.checkSize(size);
    return size === 0 ? EMPTY_MERKLE_ROOT.slice() : this.subtree(0, size).slice();
  }

  /**
   * The inclusion proof (RFC 6962 PATH) of leaf `index` in the tree of the first `size` leaves,
   * bottom-up.
   */
  inclusionProof(index: number, size: number = this.size): Uint8Array[] {
    this.checkSize(size);
    if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`leaf index ${index} is outside a tree of size ${size}`);
    }
    const out: Uint8Array[] = [];
    this.path(index, 0, size, out);
    return out;
  }

  /**
   * The consistency proof (RFC 6962 PROOF) between the trees of the first `size1` and `size2`
   * leaves (0 <= size1 <= size2 <= size). Empty when size1 is 0 or equal to size2.
   */
  consistencyProof(size1: number, size2: number = this.size): Uint8Array[] {
    this.checkSize(size2);
    if (!Number.isSafeInteger(size1) || size1 < 0 || size1 > size2) {
      throw new RangeError(`size1 ${size1} must be between 0 and size2 ${size2}`);
    }
    const out: Uint8Array[] = [];
    if (size1 > 0 && size1 < size2) this.subproof(size1, 0, size2, true, out);
    return out;
  }

  private checkSize(size: number): void {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.size) {
      throw new RangeError(`size ${size} is outside a tree of ${this.size} leaves`);
    }
  }

  /** MTH(D[a:b]) for 0 <= a < b <= size. */
  private subtree(a: number, b: number): Uint8Array {
    const n = b - a;
    if ((n & (n - 1)) === 0 && n <= 0x40000000 && a % n === 0) {
      // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
      return (this.levels[31 - Math.clz32(n)] as HashList).get(a / n);
    }
    const k = largestPowerOfTwoBelow(n);
    return merkleNodeHash(this.subtree(a, a + k), this.subtree(a + k, b));
  }

  private path(m: number, a: number, b: number, out: Uint8Array[]): void {
    const n = b - a;
    if (n === 1) return;
    const k = largestPowerOfTwoBelow(n);
    if (m < k) {
      this.path(m, a, a + k, out);
      out.push(this.subtree(a + k, b).slice());
    } else {
      this.path(m - k, a + k, b, out);
      out.push(this.subtree(a, a + k).slice());
    }
  }

  private subproof(m: number, a: number, b: number, whole: boolean, out: Uint8Array[]): void {
    const n = b - a;
    if (m === n) {
      if (!whole) out.push(this.subtree(a, b).slice());
      return;
    }
    const k = largestPowerOfTwoBelow(n);
    if (m <= k) {
      this.subproof(m, a, a + k, whole, out);
      out.push(this.subtree(a + k, b).slice());
    } else {
      this.subproof(m - k, a + k, b, false, out);
      out.push(this.subtree(a, a + k).slice());
    }
  }
}
