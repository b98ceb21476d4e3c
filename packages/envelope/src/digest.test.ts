import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from './bytes.js';
import { blake3, blake3Hex, createBlake3, sha256, sha256Hex } from './digest.js';

// BLAKE3-team/BLAKE3 test_vectors/test_vectors.json: input is bytes i % 251; the first 32 bytes of
// each case's "hash" field are the default-length digest.
const BLAKE3_VECTORS: readonly [number, string][] = [
  [0, 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262'],
  [1, '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213'],
  [1023, '10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11'],
  [1024, '42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7'],
  [1025, 'd00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444'],
  [2048, 'e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a'],
  [2049, '5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030'],
  [3072, 'b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2'],
  [3073, '7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3'],
  [4096, '015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969'],
  [4097, '9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995'],
  [5120, '9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833'],
  [5121, '628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff'],
  [6144, '3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205'],
  [6145, 'f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f'],
  [7168, '61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a'],
  [7169, 'a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817'],
  [8192, 'aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63'],
  [8193, 'bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b'],
  [16384, 'f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4'],
  [31744, '62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47'],
  [102400, 'bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085'],
];

function input(length: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => i % 251);
}

const enc = new TextEncoder();

describe('BLAKE3 official test vectors', () => {
  it.each(BLAKE3_VECTORS)('length %i', async (length, expected) => {
    const data = input(length);
    expect(toHex(blake3(data))).toBe(expected);
    expect(blake3Hex(data)).toBe(expected);
    // Cross-check the transcription against an independent implementation.
    expect(toHex(nobleBlake3(data))).toBe(expected);
    const h = await createBlake3();
    for (let off = 0; off < length; off += 1000) h.update(data.subarray(off, off + 1000));
    expect(h.digestHex()).toBe(expected);
  });
});

describe('blake3 one-shot', () => {
  it('returns a fresh 32-byte array that later calls do not overwrite', () => {
    const a = blake3(input(5));
    expect(a).toBeInstanceOf(Uint8Array);
    expect(a).toHaveLength(32);
    const before = toHex(a);
    blake3(input(6));
    blake3Hex(input(7));
    expect(toHex(a)).toBe(before);
  });

  it('hashes views and Buffers by their visible bytes only', () => {
    const big = input(300);
    expect(toHex(blake3(big.subarray(10, 210)))).toBe(toHex(blake3(Uint8Array.from(big.subarray(10, 210)))));
    expect(toHex(blake3(Buffer.from(big)))).toBe(toHex(blake3(big)));
  });

  it('agrees with @noble/hashes on random input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), (data) => {
        expect(blake3Hex(data)).toBe(toHex(nobleBlake3(data)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('createBlake3 (streaming)', () => {
  it('equals the one-shot digest for any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 6000 }),
        fc.array(fc.nat(6000), { maxLength: 12 }),
        async (data, cuts) => {
          const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
          const h = await createBlake3();
          let prev = 0;
          for (const p of [...points, data.length]) {
            expect(h.update(data.subarray(prev, p))).toBe(h);
            prev = p;
          }
          expect(toHex(h.digest())).toBe(toHex(blake3(data)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('hashers are independent of each other and of the one-shot function', async () => {
    const a = await createBlake3();
    const b = await createBlake3();
    a.update(enc.encode('hello '));
    b.update(enc.encode('other'));
    blake3(enc.encode('interleaved one-shot'));
    a.update(enc.encode('world'));
    expect(a.digestHex()).toBe(blake3Hex(enc.encode('hello world')));
    expect(b.digestHex()).toBe(blake3Hex(enc.encode('other')));
  });

  it('cannot be used after digest', async () => {
    const h = await createBlake3();
    h.update(enc.encode('x'));
    const d = h.digest();
    expect(toHex(d)).toBe(blake3Hex(enc.encode('x')));
    expect(() => h.update(enc.encode('y'))).toThrow(TypeError);
    expect(() => h.digest()).toThrow(TypeError);
    expect(() => h.digestHex()).toThrow(TypeError);

    const g = await createBlake3();
    g.digestHex();
    expect(() => g.digest()).toThrow(TypeError);
    expect(() => g.update(new Uint8Array(1))).toThrow(TypeError);
  });
});

describe('SHA-256', () => {
  it('matches the NIST FIPS 180-2 examples', () => {
    const cases: [string, string][] = [
      ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
      [
        'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
        '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
      ],
    ];
    for (const [text, expected] of cases) {
      expect(sha256Hex(enc.encode(text))).toBe(expected);
      expect(toHex(sha256(enc.encode(text)))).toBe(expected);
    }
    expect(sha256(new Uint8Array(0))).toBeInstanceOf(Uint8Array);
    expect(sha256(new Uint8Array(0))).toHaveLength(32);
  });

  it('hashes views by their visible bytes only', () => {
    const big = enc.encode('xxabcxx');
    expect(sha256Hex(big.subarray(2, 5))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
