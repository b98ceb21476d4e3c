// Edge cases where Ed25519 implementations differ ("Taming the many EdDSAs", Chalkias et al. 2020, and
// the ed25519-speccheck vectors). Heddle's rule: strict RFC 8032 decoding (S < L, y < p, no x = 0 with
// the sign bit set), the cofactorless equation, and the same answer on every backend.
import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../bytes.js';
import type { Ed25519Backend } from './backend.js';
import { nodeBackend } from './native.js';
import { nobleBackend } from './noble.js';
import { verify } from './sign.js';
import { GROUP_ORDER, isCanonicalPointEncoding, isCanonicalScalar, isSmallOrderEncoding } from './strict.js';

type Point = InstanceType<typeof ed25519.Point>;
const Point = ed25519.Point;
const L = GROUP_ORDER;
const P = 2n ** 255n - 19n;

const BACKENDS: readonly [string, Ed25519Backend][] = [
  ['node', nodeBackend],
  ['noble', nobleBackend],
];

function le(n: bigint, length = 32): Uint8Array {
  const out = new Uint8Array(length);
  let v = n;
  for (let i = 0; i < length; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  if (v !== 0n) throw new RangeError('does not fit');
  return out;
}

function fromLe(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number);
  return n;
}

function cat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

function mul(point: Point, k: bigint): Point {
  const r = ((k % L) + L) % L;
  return r === 0n ? Point.ZERO : point.multiplyUnsafe(r);
}

/** The challenge k = SHA-512(R || A || M) mod L, over the bytes exactly as given. */
function challenge(r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint {
  return (
    fromLe(
      new Uint8Array(
        createHash('sha512')
          .update(cat(r, a, m))
          .digest(),
      ),
    ) % L
  );
}

function sig(r: Uint8Array, s: bigint | Uint8Array): Uint8Array {
  return cat(r, typeof s === 'bigint' ? le(s) : s);
}

function msg(i: number): Uint8Array {
  return new TextEncoder().encode(`heddle strictness message ${i}`);
}

/** Both backends' answers, asserted equal; returns the common answer. */
function both(a: Uint8Array, m: Uint8Array, s: Uint8Array): boolean {
  // The backends' own answers: the public verify() also refuses small-order keys (tested below).
  const node = nodeBackend.verify(a, m, s);
  const noble = nobleBackend.verify(a, m, s);
  expect(noble, `backends disagree on A=${toHex(a)} sig=${toHex(s)}`).toBe(node);
  return node;
}

/** Finds the first message whose challenge k satisfies `ok(k mod 8)`; undefined when no residue can. */
function findMessage(r: Uint8Array, a: Uint8Array, ok: (k8: number) => boolean): Uint8Array | undefined {
  if (![0, 1, 2, 3, 4, 5, 6, 7].some(ok)) return undefined;
  for (let i = 0; i < 1000; i++) {
    if (ok(Number(challenge(r, a, msg(i)) % 8n))) return msg(i);
  }
  throw new Error('no message found');
}

function must(m: Uint8Array | undefined): Uint8Array {
  if (!m) throw new Error('expected a message');
  return m;
}

// The torsion subgroup: T8 has order 8, and SMALL[i] = [i]T8 are all eight small-order points.
const T8 = Point.fromBytes(fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'));
const SMALL: readonly Point[] = Array.from({ length: 8 }, (_, i) => mul(T8, BigInt(i)));
/** i such that p = [i]T8, for a small-order point; [k]([i]T8) = [(i·k) mod 8]T8. */
function smallIndex(p: Point): number | undefined {
  const i = SMALL.findIndex((q) => q.equals(p));
  return i < 0 ? undefined : i;
}
const IDENTITY = Point.ZERO.toBytes();
const B = Point.BASE;

describe('the torsion points used below', () => {
  it('are the eight distinct points of order dividing 8', () => {
    const encodings = new Set(SMALL.map((p) => toHex(p.toBytes())));
    expect(encodings.size).toBe(8);
    for (const p of SMALL) expect(mul(p, 8n).equals(Point.ZERO)).toBe(true);
    expect(mul(T8, 4n).equals(Point.ZERO)).toBe(false);
    expect(toHex(IDENTITY)).toBe(`01${'00'.repeat(31)}`);
  });
});

describe('isCanonicalScalar (S < L)', () => {
  const reference = (s: Uint8Array): boolean => fromLe(s) < L;

  it('decides the boundary values', () => {
    const cases: [bigint, boolean][] = [
      [0n, true],
      [1n, true],
      [2n ** 252n - 1n, true],
      [2n ** 252n, true],
      [L - 1n, true],
      [L, false],
      [L + 1n, false],
      [2n ** 253n - 1n, false],
      [2n * L, false],
      [2n ** 256n - 1n, false],
    ];
    for (const [s, expected] of cases) expect(isCanonicalScalar(le(s)), `S = ${s}`).toBe(expected);
  });

  it('agrees with S < L for values near L and random values', () => {
    const nearL = fc.bigInt({ min: L - 2n ** 70n, max: L + 2n ** 70n }).map((n) => le(n));
    const topByte = fc
      .tuple(fc.uint8Array({ minLength: 31, maxLength: 31 }), fc.integer({ min: 0x0e, max: 0x12 }))
      .map(([low, top]) => cat(low, Uint8Array.of(top)));
    const any = fc.uint8Array({ minLength: 32, maxLength: 32 });
    fc.assert(
      fc.property(fc.oneof(nearL, topByte, any), (s) => isCanonicalScalar(s) === reference(s)),
      { numRuns: 5000 },
    );
  });
});

describe('isCanonicalPointEncoding (y < p, no negative zero)', () => {
  // RFC 8032 5.1.3: y >= p fails; x = 0 happens exactly for y = 1 and y = p - 1, and then sign 1 fails.
  const reference = (e: Uint8Array): boolean => {
    const sign = ((e[31] as number) & 0x80) !== 0;
    const y = fromLe(e) & (2n ** 255n - 1n);
    if (y >= P) return false;
    return !(sign && (y === 1n || y === P - 1n));
  };
  const enc = (y: bigint, sign: boolean): Uint8Array => le(y | (sign ? 2n ** 255n : 0n));

  it('refuses all 19 values y >= p with either sign, and negative zero', () => {
    for (let y = P; y < 2n ** 255n; y++) {
      expect(isCanonicalPointEncoding(enc(y, false)), `y = p + ${y - P}`).toBe(false);
      expect(isCanonicalPointEncoding(enc(y, true)), `y = p + ${y - P}, sign`).toBe(false);
    }
    expect(isCanonicalPointEncoding(enc(1n, true))).toBe(false);
    expect(isCanonicalPointEncoding(enc(P - 1n, true))).toBe(false);
  });

  it('accepts the canonical neighbours', () => {
    for (const y of [0n, 1n, 2n, P - 2n, P - 1n]) expect(isCanonicalPointEncoding(enc(y, false))).toBe(true);
    for (const y of [0n, 2n, P - 2n]) expect(isCanonicalPointEncoding(enc(y, true))).toBe(true);
    for (const p of SMALL) expect(isCanonicalPointEncoding(p.toBytes())).toBe(true);
  });

  it('agrees with the RFC 8032 rule on random and boundary encodings', () => {
    const y = fc.oneof(
      fc.bigInt({ min: P - 2n ** 40n, max: 2n ** 255n - 1n }),
      fc.bigInt({ min: 0n, max: 2n ** 40n }),
      fc.bigInt({ min: 0n, max: 2n ** 255n - 1n }),
      fc.constantFrom(1n, P - 1n, P, P + 1n),
    );
    fc.assert(
      fc.property(y, fc.boolean(), (yy, sign) => {
        const e = enc(yy, sign);
        return isCanonicalPointEncoding(e) === reference(e);
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with noble strict decoding: a canonical-looking encoding decodes iff on the curve', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (e) => {
        let strict = true;
        try {
          Point.fromBytes(e, false);
        } catch {
          strict = false;
        }
        // Everything strict decoding accepts is canonical by our check.
        return !strict || isCanonicalPointEncoding(e);
      }),
      { numRuns: 300 },
    );
  });
});

describe('ed25519-speccheck vectors (Chalkias et al. 2020)', () => {
  // [message, public key, signature, expected answer of strict cofactorless verification, what it tests]
  const CASES: readonly [string, string, string, boolean, string][] = [
    [
      '2a66241a42a9ee12994d8068dcf1bb7dfc6637b45450acd43711f637fa5080fc',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a0000000000000000000000000000000000000000000000000000000000000000',
      false,
      '0: S = 0, small R, small A, R != -kA',
    ],
    [
      '8c93255d71dcab10e8f379c26200f3c7bd5f09d9bc3068d3ef4edeb4853022b6',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a0000000000000000000000000000000000000000000000000000000000000000',
      true,
      '1: S = 0, small R, small A, R = -kA',
    ],
    [
      '9bedc267423725d473888631ebf45988bad3db83851ee85c85e241a07d148b41',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
      'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43a5bb704786be79fc476f91d3f3f89b03984d8068dcf1bb7dfc6637b45450ac04',
      false,
      '2: mixed R, small A, fails cofactorless',
    ],
    [
      '9bd9f44f4dcc75bd531b56b2cd280b0bb38fc1cd6d1230e14861d861de092e79',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
      'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43a5bb704786be79fc476f91d3f3f89b03984d8068dcf1bb7dfc6637b45450ac04',
      true,
      '3: mixed R, small A, passes cofactorless',
    ],
    [
      '9bedc267423725d473888631ebf45988bad3db83851ee85c85e241a07d148b41',
      'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa182ef1a5b928da07fec769cc8a12db6bcf70dab3f3227fa315e9d5e3e01a3405',
      false,
      '4: small R, mixed A, fails cofactorless',
    ],
    [
      'aebf3f2601a0c8c5d39cc7d8911642f740b78168218da8471772b35f9d35b9ab',
      'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa8c4bd45aecaca5b24fb97bc10ac27ac8751a7dfe1baff8b953ec9f5833ca260e',
      true,
      '5: small R, mixed A, passes cofactorless',
    ],
    [
      '9bd9f44f4dcc75bd531b56b2cd280b0bb38fc1cd6d1230e14861d861de092e79',
      'cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d',
      '9046a64750444938de19f227bb80485e92b83fdb4b6506c160484c016cc1852f87909e14428a7a1d62e9f22f3d3ad7802db02eb2e688b6c52fcd6648a98bd009',
      true,
      '6: mixed R, mixed A, passes cofactorless',
    ],
    [
      'e47d62c63f830dc7a6851a0b1f33ae4bb2f507fb6cffec4011eaccd55b53f56c',
      'cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d',
      '160a1cb0dc9c0258cd0a7d23e94d8fa878bcb1925f2c64246b2dee1796bed5125ec6bc982a269b723e0668e540911a9a6a58921d6925e434ab10aa7940551a09',
      false,
      '7: mixed R, mixed A, passes only cofactored',
    ],
    [
      'e47d62c63f830dc7a6851a0b1f33ae4bb2f507fb6cffec4011eaccd55b53f56c',
      'cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d',
      '21122a84e0b5fca4052f5b1235c80a537878b38f3142356b2c2384ebad4668b7e40bc836dac0f71076f9abe3a53f9c03c1ceeeddb658d0030494ace586687405',
      false,
      '8: pre-reduced scalar (cofactored without reduction only)',
    ],
    [
      '85e241a07d148b41e47d62c63f830dc7a6851a0b1f33ae4bb2f507fb6cffec40',
      '442aad9f089ad9e14647b1ef9099a1ff4798d78589e66f28eca69c11f582a623',
      'e96f66be976d82e60150baecff9906684aebb1ef181f67a7189ac78ea23b6c0e547f7690a0e2ddcd04d87dbc3490dc19b3b3052f7ff0538cb68afb369ba3a514',
      false,
      '9: S > L',
    ],
    [
      '85e241a07d148b41e47d62c63f830dc7a6851a0b1f33ae4bb2f507fb6cffec40',
      '442aad9f089ad9e14647b1ef9099a1ff4798d78589e66f28eca69c11f582a623',
      '8ce5b96c8f26d0ab6c47958c9e68b937104cd36e13c33566acd2fe8d38aa19427e71f98a473474f2f13f06f97c20d58cc3f54b8bd0d272f42b695dd7e89a8c22',
      false,
      '10: S >> L (high bit set)',
    ],
    [
      '9bedc267423725d473888631ebf45988bad3db83851ee85c85e241a07d148b41',
      'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff03be9678ac102edcd92b0210bb34d7428d12ffc5df5f37e359941266a4e35f0f',
      false,
      '11: non-canonical R (negative zero), hashed reduced',
    ],
    [
      '9bedc267423725d473888631ebf45988bad3db83851ee85c85e241a07d148b41',
      'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffca8c5b64cd208982aa38d4936621a4775aa233aa0505711d8fdcfdaa943d4908',
      false,
      '12: non-canonical R (negative zero), hashed as given',
    ],
    [
      'e96b7021eb39c1a163b6da4e3093dcd3f21387da4cc4572be588fafae23c155b',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
      'a9d55260f765261eb9b84e106f665e00b867287a761990d7135963ee0a7d59dca5bb704786be79fc476f91d3f3f89b03984d8068dcf1bb7dfc6637b45450ac04',
      false,
      '13: non-canonical A (negative zero), hashed reduced',
    ],
    [
      '39a591f5321bbe07fd5a23dc2f39d025d74526615746727ceefd6e82ae65c06f',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
      'a9d55260f765261eb9b84e106f665e00b867287a761990d7135963ee0a7d59dca5bb704786be79fc476f91d3f3f89b03984d8068dcf1bb7dfc6637b45450ac04',
      false,
      '14: non-canonical A (negative zero), hashed as given (OpenSSL alone accepts it)',
    ],
  ];

  it.each(CASES)('case %#', (m, a, s, expected, what) => {
    expect(both(fromHex(a), fromHex(m), fromHex(s)), what).toBe(expected);
  });
});

describe('non-canonical S', () => {
  const seed = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
  const m = msg(1);

  it.each(BACKENDS)('%s: refuses S + kL for every k that fits in 32 bytes', (_n, backend) => {
    const good = backend.sign(seed, m);
    const pk = backend.publicKeyFromSecret(seed);
    expect(verify(pk, m, good, backend)).toBe(true);
    const s = fromLe(good.subarray(32));
    for (let k = 1n; s + k * L < 2n ** 256n; k++) {
      expect(verify(pk, m, sig(good.subarray(0, 32), s + k * L), backend), `S + ${k}L`).toBe(false);
    }
  });

  it('refuses S = L where S = 0 is accepted (identity key, identity R)', () => {
    expect(both(IDENTITY, m, sig(IDENTITY, 0n))).toBe(true);
    expect(both(IDENTITY, m, sig(IDENTITY, L))).toBe(false);
    expect(both(IDENTITY, m, sig(IDENTITY, 2n * L))).toBe(false);
  });
});

describe('non-canonical point encodings', () => {
  // Every non-canonical encoding: y = p + d (d = 0..18) with either sign, and the two negative zeros.
  const NON_CANONICAL: readonly Uint8Array[] = [
    ...Array.from({ length: 19 }, (_, d) => le(P + BigInt(d))),
    ...Array.from({ length: 19 }, (_, d) => le(P + BigInt(d) + 2n ** 255n)),
    le(1n + 2n ** 255n),
    le(P - 1n + 2n ** 255n),
  ];

  /** Decodes as a lenient (ZIP 215) verifier would: y mod p, negative zero allowed. */
  function lenientDecode(e: Uint8Array): Point | undefined {
    try {
      return Point.fromBytes(e, true);
    } catch {
      return undefined;
    }
  }

  it('there are 40, none canonical, several of them decodable by a lenient decoder', () => {
    expect(NON_CANONICAL).toHaveLength(40);
    for (const e of NON_CANONICAL) expect(isCanonicalPointEncoding(e)).toBe(false);
    const decodable = NON_CANONICAL.filter((e) => lenientDecode(e) !== undefined);
    expect(decodable.length).toBeGreaterThanOrEqual(6);
  });

  it('as A: refused, even where the equation holds for the leniently decoded point', () => {
    let holdsLeniently = 0;
    for (const a of NON_CANONICAL) {
      const point = lenientDecode(a);
      // R = identity and S = 0 satisfy [S]B = R + [k]A exactly when [k]A is the identity.
      let m = msg(0);
      const i = point && smallIndex(point);
      if (i !== undefined) {
        m = must(findMessage(IDENTITY, a, (k) => (i * k) % 8 === 0));
        holdsLeniently++;
      }
      expect(both(a, m, sig(IDENTITY, 0n)), toHex(a)).toBe(false);
    }
    expect(holdsLeniently).toBeGreaterThanOrEqual(6);
  });

  it('as A: refused where a real key pair would verify under the same point', () => {
    // A non-canonical encoding of a large-order point cannot be built from a key (y >= p covers only 19
    // values), so use the identity's encodings y = p + 1 (either sign) and y = 1 with the sign bit.
    const identityEncodings = [le(P + 1n), le(P + 1n + 2n ** 255n), le(1n + 2n ** 255n)];
    for (const a of identityEncodings) {
      expect(lenientDecode(a)?.equals(Point.ZERO)).toBe(true);
      for (let i = 0; i < 4; i++) expect(both(a, msg(i), sig(IDENTITY, 0n))).toBe(false);
    }
  });

  it('as R: refused where the computed R is the point it leniently encodes', () => {
    const a = 0x1234567n;
    const pk = mul(B, a).toBytes();
    for (const r of NON_CANONICAL) {
      const point = lenientDecode(r);
      if (!point) {
        expect(both(pk, msg(0), sig(r, 5n))).toBe(false);
        continue;
      }
      const j = smallIndex(point);
      if (j === undefined) continue; // large order: no known discrete log
      // Need [S]B - [k]A = point. Only possible for the identity: S = k·a.
      if (point.equals(Point.ZERO)) {
        const m = msg(3);
        const s = (challenge(r, pk, m) * a) % L;
        expect(
          mul(B, s)
            .subtract(mul(mul(B, a), challenge(r, pk, m)))
            .equals(point),
        ).toBe(true);
        expect(both(pk, m, sig(r, s)), toHex(r)).toBe(false);
      }
      // With a small-order key A and S = 0, find k with -[k]A = point (a lenient verifier accepts).
      for (let i = 1; i < 8; i++) {
        const aBytes = (SMALL[i] as Point).toBytes();
        const m = findMessage(r, aBytes, (k) => (8 - ((i * k) % 8)) % 8 === j);
        if (!m) continue; // the point is not in the subgroup generated by A
        expect(both(aBytes, m, sig(r, 0n)), `R=${toHex(r)} A=${toHex(aBytes)}`).toBe(false);
      }
    }
  });

  it('the canonical counterparts of those cases are accepted (so the refusals come from the encoding)', () => {
    expect(both(IDENTITY, msg(0), sig(IDENTITY, 0n))).toBe(true);
    const a = 0x1234567n;
    const pk = mul(B, a).toBytes();
    const s = (challenge(IDENTITY, pk, msg(3)) * a) % L;
    expect(both(pk, msg(3), sig(IDENTITY, s))).toBe(true);
  });
});

describe('small-order and mixed-order components (cofactorless equation)', () => {
  const a = 0xdeadbeefcafen;
  const A = mul(B, a);
  const r = 0x1337c0ffeen;

  it('small-order A with R = identity and S = 0: accepted iff [k]A = identity, same on both backends', () => {
    for (let i = 0; i < 8; i++) {
      const aBytes = (SMALL[i] as Point).toBytes();
      const yes = must(findMessage(IDENTITY, aBytes, (k) => (i * k) % 8 === 0));
      expect(both(aBytes, yes, sig(IDENTITY, 0n)), `A=${toHex(aBytes)}`).toBe(true);
      if (i !== 0) {
        const no = must(findMessage(IDENTITY, aBytes, (k) => (i * k) % 8 !== 0));
        expect(both(aBytes, no, sig(IDENTITY, 0n)), `A=${toHex(aBytes)}`).toBe(false);
      }
    }
  });

  it('the identity public key satisfies the equation with (identity, 0) for any message', () => {
    // Not a cofactor question: [0]B = identity + [k]identity for every k. This is why verify()
    // refuses small-order keys outright (next test).
    for (let i = 0; i < 8; i++) expect(both(IDENTITY, msg(i), sig(IDENTITY, 0n))).toBe(true);
  });

  it('verify() refuses every small-order public key, even where the equation holds, on both backends', () => {
    expect(SMALL.every((p) => isSmallOrderEncoding(p.toBytes()))).toBe(true);
    for (let i = 0; i < 8; i++) {
      const aBytes = (SMALL[i] as Point).toBytes();
      const m = must(findMessage(IDENTITY, aBytes, (k) => (i * k) % 8 === 0));
      expect(both(aBytes, m, sig(IDENTITY, 0n)), 'the equation holds').toBe(true);
      for (const backend of [nodeBackend, nobleBackend]) {
        expect(verify(aBytes, m, sig(IDENTITY, 0n), backend), `${backend.name} A=${toHex(aBytes)}`).toBe(
          false,
        );
      }
    }
    // Prime-order and mixed-order keys are not small-order encodings.
    expect(isSmallOrderEncoding(A.toBytes())).toBe(false);
    expect(isSmallOrderEncoding(A.add(SMALL[1] as Point).toBytes())).toBe(false);
  });

  it('small-order R other than the identity never verifies against a prime-order key', () => {
    const pk = A.toBytes();
    for (const small of SMALL.slice(1)) {
      const rBytes = small.toBytes();
      for (const s of [0n, 1n, 12345n, (challenge(rBytes, pk, msg(0)) * a) % L]) {
        expect(both(pk, msg(0), sig(rBytes, s))).toBe(false);
      }
    }
  });

  it('R = identity verifies against a prime-order key when S = k·a', () => {
    const pk = A.toBytes();
    const s = (challenge(IDENTITY, pk, msg(9)) * a) % L;
    expect(both(pk, msg(9), sig(IDENTITY, s))).toBe(true);
    expect(both(pk, msg(10), sig(IDENTITY, s))).toBe(false);
  });

  it('mixed-order R (rB + T) is refused: the cofactorless equation does not clear torsion', () => {
    const pk = A.toBytes();
    for (const t of SMALL.slice(1)) {
      const rBytes = mul(B, r).add(t).toBytes();
      const k = challenge(rBytes, pk, msg(0));
      // A cofactored verifier accepts this: 8([S]B - [k]A - R) = -8T = identity.
      const s = (r + k * a) % L;
      expect(
        mul(mul(B, s).subtract(mul(A, k)).subtract(Point.fromBytes(rBytes)), 8n).equals(Point.ZERO),
      ).toBe(true);
      expect(both(pk, msg(0), sig(rBytes, s))).toBe(false);
    }
  });

  it('mixed-order A (aB + T): accepted iff [k]T = identity, same on both backends', () => {
    for (let i = 1; i < 8; i++) {
      const t = SMALL[i] as Point;
      const aBytes = A.add(t).toBytes();
      const rBytes = mul(B, r).toBytes();
      const signFor = (m: Uint8Array): Uint8Array => sig(rBytes, (r + challenge(rBytes, aBytes, m) * a) % L);
      const yes = must(findMessage(rBytes, aBytes, (k) => (i * k) % 8 === 0));
      const no = must(findMessage(rBytes, aBytes, (k) => (i * k) % 8 !== 0));
      // Check the construction independently: [S]B - [k]A' = R - [k]T.
      const kYes = challenge(rBytes, aBytes, yes);
      expect(
        mul(B, fromLe(signFor(yes).subarray(32)))
          .subtract(mul(A.add(t), kYes))
          .toBytes(),
      ).toEqual(rBytes);
      expect(both(aBytes, yes, signFor(yes)), `T=${toHex(t.toBytes())}`).toBe(true);
      expect(both(aBytes, no, signFor(no)), `T=${toHex(t.toBytes())}`).toBe(false);
    }
  });

  it('small A with mixed R (speccheck [*]): accepted iff R = [S]B - [k]A exactly', () => {
    let accepted = 0;
    for (let i = 1; i < 8; i++) {
      const aBytes = (SMALL[i] as Point).toBytes();
      for (let j = 1; j < 8; j++) {
        const rBytes = mul(B, r)
          .add(SMALL[j] as Point)
          .toBytes();
        // [S]B - [k]A = rB + T_j with S = r needs -[k]A = T_j, i.e. -(i·k) = j (mod 8).
        const yes = findMessage(rBytes, aBytes, (k) => (8 - ((i * k) % 8)) % 8 === j);
        if (yes) {
          expect(both(aBytes, yes, sig(rBytes, r))).toBe(true);
          accepted++;
        }
        const no = must(findMessage(rBytes, aBytes, (k) => (8 - ((i * k) % 8)) % 8 !== j));
        expect(both(aBytes, no, sig(rBytes, r))).toBe(false);
      }
    }
    expect(accepted).toBeGreaterThan(10);
  });
});
