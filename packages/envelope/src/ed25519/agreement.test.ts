// Property tests: the node and noble backends give the same answer on every input, valid or not.
import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from '../bytes.js';
import { nodeBackend } from './native.js';
import { nobleBackend } from './noble.js';
import { publicKeyFromSecret, sign, verify } from './sign.js';
import { GROUP_ORDER } from './strict.js';

const Point = ed25519.Point;
const L = GROUP_ORDER;

const bytes = (n: number): fc.Arbitrary<Uint8Array> => fc.uint8Array({ minLength: n, maxLength: n });
const seed = bytes(32);
const message = fc.uint8Array({ maxLength: 300 });

function le(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = n;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function fromLe(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i] as number);
  return n;
}

function challenge(r: Uint8Array, a: Uint8Array, msg: Uint8Array): bigint {
  return fromLe(new Uint8Array(createHash('sha512').update(r).update(a).update(msg).digest())) % L;
}

/** Verifies on both backends, failing the property if they disagree; returns the common answer. */
function agree(publicKey: Uint8Array, msg: Uint8Array, signature: Uint8Array): boolean {
  // The backends' own answers: the public verify() also refuses small-order keys (tested below).
  const node = nodeBackend.verify(publicKey, msg, signature);
  const noble = nobleBackend.verify(publicKey, msg, signature);
  if (node !== noble) {
    throw new Error(`disagree (node ${node}, noble ${noble}): A=${toHex(publicKey)} sig=${toHex(signature)}`);
  }
  return node;
}

/** A key pair and a valid signature, made once per generated case with the fast backend. */
const signed = fc.tuple(seed, message).map(([sk, msg]) => {
  const publicKey = publicKeyFromSecret(sk, nodeBackend);
  return { sk, publicKey, msg, signature: sign(sk, msg, nodeBackend) };
});

const T8 = Point.fromBytes(
  Uint8Array.from(Buffer.from('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', 'hex')),
);
const SMALL_ORDER: readonly Uint8Array[] = Array.from({ length: 8 }, (_, i) =>
  (i === 0 ? Point.ZERO : T8.multiplyUnsafe(BigInt(i))).toBytes(),
);

describe('backend agreement (property tests)', () => {
  it('valid triples: same public key, same signature, both verify', () => {
    fc.assert(
      fc.property(seed, message, (sk, msg) => {
        const pkNode = publicKeyFromSecret(sk, nodeBackend);
        const pkNoble = publicKeyFromSecret(sk, nobleBackend);
        expect(toHex(pkNoble)).toBe(toHex(pkNode));
        const sigNode = sign(sk, msg, nodeBackend);
        const sigNoble = sign(sk, msg, nobleBackend);
        expect(toHex(sigNoble)).toBe(toHex(sigNode));
        expect(agree(pkNode, msg, sigNode)).toBe(true);
        expect(publicKeyFromSecret(sk)).toEqual(pkNode);
        expect(verify(pkNode, msg, sigNode)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('signatures with random bytes changed are refused by both', () => {
    const edits = fc.array(fc.tuple(fc.nat(63), fc.integer({ min: 1, max: 255 })), {
      minLength: 1,
      maxLength: 4,
    });
    fc.assert(
      fc.property(signed, edits, ({ publicKey, msg, signature }, changes) => {
        const bad = Uint8Array.from(signature);
        for (const [i, x] of changes) bad[i] = (bad[i] as number) ^ x;
        if (toHex(bad) === toHex(signature)) return; // the edits cancelled out
        expect(agree(publicKey, msg, bad)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('changed messages are refused by both', () => {
    fc.assert(
      fc.property(
        signed,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        ({ publicKey, msg, signature }, at, x) => {
          const longer = Uint8Array.from([...msg, x]);
          expect(agree(publicKey, longer, signature)).toBe(false);
          if (msg.length > 0) {
            const bad = Uint8Array.from(msg);
            const i = at % msg.length;
            bad[i] = (bad[i] as number) ^ x;
            expect(agree(publicKey, bad, signature)).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('changed public keys are refused by both', () => {
    fc.assert(
      fc.property(
        signed,
        fc.nat(31),
        fc.integer({ min: 1, max: 255 }),
        ({ publicKey, msg, signature }, i, x) => {
          const bad = Uint8Array.from(publicKey);
          bad[i] = (bad[i] as number) ^ x;
          expect(agree(bad, msg, signature)).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('random 32-byte keys and 64-byte signatures: both refuse, neither throws', () => {
    fc.assert(
      fc.property(bytes(32), message, bytes(64), (publicKey, msg, signature) => {
        expect(agree(publicKey, msg, signature)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('random signatures with a canonical S (top byte < 0x10): both refuse', () => {
    const canonicalS = bytes(64).map((s) => {
      s[63] = (s[63] as number) & 0x0f;
      return s;
    });
    fc.assert(
      fc.property(signed, canonicalS, ({ publicKey, msg }, signature) => {
        expect(agree(publicKey, msg, signature)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('S replaced by S + L (and S + 2L ...): both refuse', () => {
    fc.assert(
      fc.property(signed, fc.integer({ min: 1, max: 15 }), ({ publicKey, msg, signature }, k) => {
        const s = fromLe(signature.subarray(32)) + BigInt(k) * L;
        fc.pre(s < 2n ** 256n);
        const bad = Uint8Array.from([...signature.subarray(0, 32), ...le(s)]);
        expect(agree(publicKey, msg, bad)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('R replaced by a small-order point: both give the same answer', () => {
    fc.assert(
      fc.property(
        signed,
        fc.nat(7),
        fc.oneof(bytes(32), fc.constant(new Uint8Array(32))),
        ({ publicKey, msg }, i, s) => {
          s[31] = (s[31] as number) & 0x0f;
          const r = SMALL_ORDER[i] as Uint8Array;
          // Against a prime-order key [S]B - [k]A is never a non-identity small-order point, and is the
          // identity only for S = k·a, which random S is not.
          expect(agree(publicKey, msg, Uint8Array.from([...r, ...s]))).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('small-order keys with small-order R and S = 0: both give the same answer', () => {
    fc.assert(
      fc.property(fc.nat(7), fc.nat(7), message, (i, j, msg) => {
        const a = SMALL_ORDER[i] as Uint8Array;
        const r = SMALL_ORDER[j] as Uint8Array;
        const ok = agree(a, msg, Uint8Array.from([...r, ...new Uint8Array(32)]));
        // [0]B - [k]A = R, with [k]([i]T8) = [(i·k) mod 8]T8 and -[n]T8 = [8 - n]T8.
        const k8 = Number(challenge(r, a, msg) % 8n);
        expect(ok).toBe((8 - ((i * k8) % 8)) % 8 === j);
      }),
      { numRuns: 500 },
    );
  });

  it('mixed-order keys (aB + T) over signatures made for them: both give the same answer', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: L - 1n }),
        fc.bigInt({ min: 1n, max: L - 1n }),
        fc.nat(7),
        message,
        (a, r, i, msg) => {
          const t = Point.fromBytes(SMALL_ORDER[i] as Uint8Array);
          const aBytes = Point.BASE.multiply(a).add(t).toBytes();
          const rBytes = Point.BASE.multiply(r).toBytes();
          const k = challenge(rBytes, aBytes, msg);
          const s = (r + k * a) % L;
          const ok = agree(aBytes, msg, Uint8Array.from([...rBytes, ...le(s)]));
          // Cofactorless: accepted exactly when [k]T is the identity.
          expect(ok).toBe(t.multiplyUnsafe(k).is0());
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('junk arguments', () => {
  const pk = publicKeyFromSecret(new Uint8Array(32));
  const sig = sign(new Uint8Array(32), new Uint8Array(0));
  const msg = new Uint8Array(0);
  const junk: readonly unknown[] = [
    null,
    undefined,
    'aa'.repeat(32),
    'x',
    Array.from({ length: 32 }, () => 0),
    Array.from({ length: 64 }, () => 0),
    32,
    {},
    new ArrayBuffer(32),
    new Uint16Array(16),
    new DataView(new ArrayBuffer(32)),
  ];
  // Calls through `unknown` so the tests can pass what the types forbid.
  const verifyU = verify as (a: unknown, m: unknown, s: unknown) => boolean;
  const signU = sign as (k: unknown, m: unknown) => Uint8Array;
  const pkU = publicKeyFromSecret as (k: unknown) => Uint8Array;

  for (const [name, backend] of [
    ['node', nodeBackend],
    ['noble', nobleBackend],
  ] as const) {
    it(`${name}: TypeError for wrong types and lengths`, () => {
      const verifyB = (a: unknown, m: unknown, s: unknown): boolean =>
        verify(a as Uint8Array, m as Uint8Array, s as Uint8Array, backend);
      const signB = (k: unknown, m: unknown): Uint8Array => sign(k as Uint8Array, m as Uint8Array, backend);
      const pkB = (k: unknown): Uint8Array => publicKeyFromSecret(k as Uint8Array, backend);
      for (const j of junk) {
        expect(() => verifyB(j, msg, sig)).toThrow(TypeError);
        expect(() => verifyB(pk, j, sig)).toThrow(TypeError);
        expect(() => verifyB(pk, msg, j)).toThrow(TypeError);
        expect(() => signB(j, msg)).toThrow(TypeError);
        expect(() => signB(new Uint8Array(32), j)).toThrow(TypeError);
        expect(() => pkB(j)).toThrow(TypeError);
      }
      for (const n of [0, 1, 31, 33, 64]) {
        expect(() => verifyB(new Uint8Array(n), msg, sig)).toThrow(TypeError);
        expect(() => signB(new Uint8Array(n), msg)).toThrow(TypeError);
        expect(() => pkB(new Uint8Array(n))).toThrow(TypeError);
      }
      for (const n of [0, 32, 63, 65, 128])
        expect(() => verifyB(pk, msg, new Uint8Array(n))).toThrow(TypeError);
    });
  }

  it('the default backend throws TypeError too', () => {
    for (const j of junk) {
      expect(() => verifyU(j, msg, sig)).toThrow(TypeError);
      expect(() => verifyU(pk, j, sig)).toThrow(TypeError);
      expect(() => verifyU(pk, msg, j)).toThrow(TypeError);
      expect(() => signU(j, msg)).toThrow(TypeError);
      expect(() => signU(new Uint8Array(32), j)).toThrow(TypeError);
      expect(() => pkU(j)).toThrow(TypeError);
    }
    expect(verifyU(pk, msg, sig)).toBe(true);
  });

  it('verify returns false, never throws, for all-zero and all-ones values', () => {
    for (const a of [new Uint8Array(32), new Uint8Array(32).fill(0xff)]) {
      for (const s of [new Uint8Array(64), new Uint8Array(64).fill(0xff)]) {
        expect(agree(a, msg, s)).toBe(false);
      }
    }
  });
});
