import { blake3, concatBytes, toHex } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_MERKLE_ROOT,
  MerkleTree,
  merkleRoot,
  openMemoryChain,
  verifyConsistency,
  verifyInclusion,
} from './index.js';

// An independent, deliberately plain implementation of RFC 6962 section 2.1 over BLAKE3, written
// straight from the definitions (MTH, PATH, SUBPROOF) on arrays of leaf data.
const H = (...parts: Uint8Array[]): Uint8Array => blake3(concatBytes(...parts));
const ZERO = new Uint8Array([0]);
const ONE = new Uint8Array([1]);

function k(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

// MTH is memoised by the (first leaf, length) of the slice it is given (slices below are always of
// the one `leaves` array), only to keep the 2,000-odd proof comparisons fast.
const memo = new Map<string, Uint8Array>();
function mth(d: Uint8Array[]): Uint8Array {
  if (d.length === 0) return H();
  if (d.length === 1) return H(ZERO, d[0] as Uint8Array);
  const key = `${leaves.indexOf(d[0] as Uint8Array)}:${d.length}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const s = k(d.length);
  const h = H(ONE, mth(d.slice(0, s)), mth(d.slice(s)));
  memo.set(key, h);
  return h;
}

function path(m: number, d: Uint8Array[]): Uint8Array[] {
  if (d.length === 1) return [];
  const s = k(d.length);
  if (m < s) return [...path(m, d.slice(0, s)), mth(d.slice(s))];
  return [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
}

function subproof(m: number, d: Uint8Array[], b: boolean): Uint8Array[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const s = k(d.length);
  if (m <= s) return [...subproof(m, d.slice(0, s), b), mth(d.slice(s))];
  return [...subproof(m - s, d.slice(s), false), mth(d.slice(0, s))];
}

const leaves: Uint8Array[] = Array.from({ length: 64 }, (_, i) => blake3(new Uint8Array([i, 7, 42])));
const hex = (list: Uint8Array[]): string[] => list.map(toHex);

function flip(h: string): string {
  return (h[0] === '0' ? '1' : '0') + h.slice(1);
}

describe('Merkle tree against the RFC 6962 definitions, all sizes 1..64', () => {
  const tree = new MerkleTree();
  for (const l of leaves) tree.append(l);
  const roots = [H(), ...leaves.map((_, i) => mth(leaves.slice(0, i + 1)))];

  it('computes the same roots', () => {
    expect(toHex(tree.root(0))).toBe(toHex(EMPTY_MERKLE_ROOT));
    for (let n = 0; n <= 64; n++) {
      expect(toHex(tree.root(n)), `size ${n}`).toBe(toHex(roots[n] as Uint8Array));
      expect(merkleRoot(leaves.slice(0, n))).toBe(toHex(roots[n] as Uint8Array));
    }
    // Incrementally built trees agree with the big one at every size.
    const small = new MerkleTree();
    for (let n = 1; n <= 64; n++) {
      small.append(leaves[n - 1] as Uint8Array);
      expect(toHex(small.root())).toBe(toHex(roots[n] as Uint8Array));
    }
  });

  // Each check is recorded as a line when it goes wrong; one assertion per test keeps 20,000-odd
  // checks fast and the failure message lists every wrong case.
  it('produces and verifies every inclusion proof; tampering is rejected', () => {
    const wrong: string[] = [];
    const want = (ok: boolean, what: string): void => {
      if (!ok) wrong.push(what);
    };
    for (let n = 1; n <= 64; n++) {
      const root = toHex(roots[n] as Uint8Array);
      for (let m = 0; m < n; m++) {
        const at = `${m}/${n}`;
        const proof = hex(tree.inclusionProof(m, n));
        want(proof.join() === hex(path(m, leaves.slice(0, n))).join(), `PATH ${at}`);
        const leaf = toHex(leaves[m] as Uint8Array);
        want(verifyInclusion(leaf, m, n, proof, root), `verify ${at}`);
        want(
          verifyInclusion(leaves[m] as Uint8Array, m, n, tree.inclusionProof(m, n), roots[n] as Uint8Array),
          `verify bytes ${at}`,
        );
        // Wrong leaf, index, size, root; each tampered node; a dropped or an extra node.
        want(
          !verifyInclusion(toHex(leaves[(m + 1) % 64] as Uint8Array), m, n, proof, root),
          `other leaf ${at}`,
        );
        if (n > 1) want(!verifyInclusion(leaf, (m + 1) % n, n, proof, root), `other index ${at}`);
        // (A wrong size with the same path shape verifies too: the size is bound by the signed
        // checkpoint next to the root, as in RFC 6962. A size that changes the shape does not.)
        want(!verifyInclusion(leaf, m, 2 * n + 1, proof, root), `other size ${at}`);
        want(!verifyInclusion(leaf, m, n, proof, flip(root)), `other root ${at}`);
        for (let i = 0; i < proof.length; i++) {
          const bad = [...proof];
          bad[i] = flip(bad[i] as string);
          want(!verifyInclusion(leaf, m, n, bad, root), `tampered node ${i} ${at}`);
        }
        if (proof.length > 0) want(!verifyInclusion(leaf, m, n, proof.slice(1), root), `short ${at}`);
        want(!verifyInclusion(leaf, m, n, [...proof, root], root), `long ${at}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('produces and verifies every consistency proof; tampering is rejected', () => {
    const wrong: string[] = [];
    const want = (ok: boolean, what: string): void => {
      if (!ok) wrong.push(what);
    };
    for (let n = 1; n <= 64; n++) {
      const r2 = toHex(roots[n] as Uint8Array);
      for (let m = 0; m <= n; m++) {
        const at = `${m}->${n}`;
        const r1 = toHex(roots[m] as Uint8Array);
        const proof = hex(tree.consistencyProof(m, n));
        const expected = m === 0 || m === n ? [] : hex(subproof(m, leaves.slice(0, n), true));
        want(proof.join() === expected.join(), `PROOF ${at}`);
        want(verifyConsistency(m, n, r1, r2, proof), `verify ${at}`);
        want(!verifyConsistency(m, n, flip(r1), r2, proof), `other root1 ${at}`);
        if (m > 0) want(!verifyConsistency(m, n, r1, flip(r2), proof), `other root2 ${at}`);
        if (m > 0 && m < n) {
          want(!verifyConsistency(m, n, r1, r2, []), `empty ${at}`);
          want(!verifyConsistency(m - 1, n, r1, r2, proof), `other size1 ${at}`);
          want(!verifyConsistency(n, m, r2, r1, proof), `swapped ${at}`);
          for (let i = 0; i < proof.length; i++) {
            const bad = [...proof];
            bad[i] = flip(bad[i] as string);
            want(!verifyConsistency(m, n, r1, r2, bad), `tampered node ${i} ${at}`);
          }
          want(!verifyConsistency(m, n, r1, r2, proof.slice(0, -1)), `short ${at}`);
          want(!verifyConsistency(m, n, r1, r2, [...proof, r2]), `long ${at}`);
        }
        if (m === n) want(!verifyConsistency(m, n, r1, r2, [r1]), `non-empty ${at}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('rejects malformed arguments without throwing', () => {
    const root = toHex(roots[4] as Uint8Array);
    const proof = hex(tree.inclusionProof(1, 4));
    const leaf = toHex(leaves[1] as Uint8Array);
    expect(verifyInclusion(leaf, 1, 4, proof, root)).toBe(true);
    expect(verifyInclusion(leaf.toUpperCase(), 1, 4, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, -1, 4, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, 1.5, 4, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, 4, 4, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, 1, 4, ['zz'], root)).toBe(false);
    expect(verifyInclusion(leaf, 1, 4, null as unknown as string[], root)).toBe(false);
    expect(verifyConsistency(0, 4, toHex(H()), root, [])).toBe(true);
    expect(verifyConsistency(0, 4, root, root, [])).toBe(false);
    expect(verifyConsistency(0, 4, toHex(H()), root, [root])).toBe(false);
    expect(verifyConsistency(2, 4, 'x', root, [])).toBe(false);
    expect(() => tree.inclusionProof(5, 4)).toThrow(RangeError);
    expect(() => tree.root(65)).toThrow(RangeError);
  });
});

describe('chain proofs', () => {
  it('proves inclusion of events and consistency between sizes', async () => {
    const chain = await openMemoryChain();
    for (let i = 0; i < 37; i++) await chain.append('workload', 'workload.start', { i });
    const r20 = chain.root(20);
    expect(r20).toBe(merkleRoot(chain.range(0, 20).map((e) => e.hash)));
    const p = chain.inclusionProof(13, 20);
    expect(p).toMatchObject({ seq: 13, size: 20, leaf: chain.get(13)?.hash, root: r20 });
    expect(verifyInclusion(p.leaf, p.seq, p.size, p.path, r20)).toBe(true);
    const latest = chain.inclusionProof(36);
    expect(verifyInclusion(latest.leaf, 36, 37, latest.path, chain.root())).toBe(true);
    const c = chain.consistencyProof(20);
    expect(c).toMatchObject({ size1: 20, size2: 37, root1: r20, root2: chain.root() });
    expect(verifyConsistency(c.size1, c.size2, c.root1, c.root2, c.path)).toBe(true);
    expect(() => chain.inclusionProof(37)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => chain.consistencyProof(38)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => chain.root(38)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});
