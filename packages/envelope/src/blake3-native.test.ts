import { execFileSync } from 'node:child_process';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLAKE3_BACKEND_ENV, loadNativeBlake3 } from './blake3-native.js';
import { toHex } from './bytes.js';
import { blake3, blake3Backend, createBlake3 } from './digest.js';

// Official BLAKE3 vectors (input bytes i % 251) on both sides of the native threshold (2,048 bytes).
const VECTORS: readonly [number, string][] = [
  [1024, '42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7'],
  [2048, 'e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a'],
  [2049, '5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030'],
  [102400, 'bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085'],
];

const input = (length: number): Uint8Array => Uint8Array.from({ length }, (_, i) => i % 251);

// The optional dependency is installed in this workspace for linux x64/arm64/armhf; where it cannot
// load (another platform), the native-only tests have nothing to test.
const native = loadNativeBlake3({});
const onNative = native === undefined ? it.skip : it;

describe('native BLAKE3 (@napi-rs/blake-hash)', () => {
  it('is the backend in this workspace on linux x64 and arm64', () => {
    if (process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64')) {
      expect(blake3Backend()).toBe('native');
    }
  });

  onNative.each(VECTORS)(
    'gives the official vector, one-shot and streamed (length %i)',
    (length, expected) => {
      if (native === undefined) return;
      expect(toHex(native.blake3(input(length)))).toBe(expected);
      const h = native.createHasher();
      const data = input(length);
      for (let off = 0; off < length; off += 777) h.update(data.subarray(off, off + 777));
      expect(toHex(h.digest())).toBe(expected);
    },
  );

  onNative(
    'agrees with an independent implementation on any input, through the public functions',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uint8Array({ minLength: 0, maxLength: 9000 }),
          fc.integer({ min: 1, max: 4096 }),
          async (data, step) => {
            const expected = toHex(nobleBlake3(data));
            expect(toHex(blake3(data))).toBe(expected);
            const h = await createBlake3();
            for (let off = 0; off < data.length; off += step) h.update(data.subarray(off, off + step));
            expect(h.digestHex()).toBe(expected);
          },
        ),
        { numRuns: 150 },
      );
    },
  );

  it('is not used when missing, when its shape is wrong, or when it gives a wrong digest', () => {
    expect(
      loadNativeBlake3({}, () => {
        throw new Error('Cannot find module');
      }),
    ).toBeUndefined();
    expect(loadNativeBlake3({}, () => ({ blake3: 1 }))).toBeUndefined();
    const wrong = {
      blake3: (b: Uint8Array) => nobleBlake3(b).map((x) => x ^ 1),
      Blake3Hasher: class {
        update(): void {}
        digestBuffer(): Uint8Array {
          return new Uint8Array(32);
        }
      },
    };
    expect(loadNativeBlake3({}, () => wrong)).toBeUndefined();
    const right = {
      blake3: (b: Uint8Array) => nobleBlake3(b),
      Blake3Hasher: class {
        private readonly parts: Uint8Array[] = [];
        update(b: Uint8Array): void {
          this.parts.push(b.slice());
        }
        digestBuffer(): Uint8Array {
          return nobleBlake3(Buffer.concat(this.parts));
        }
      },
    };
    expect(loadNativeBlake3({}, () => right)).toBeDefined();
  });

  // The child imports the built module (`pnpm build` runs before the tests in CI and in `npm test`).
  it('is turned off by HEDDLE_BLAKE3=portable, and the portable path gives the same digests', () => {
    expect(loadNativeBlake3({ [BLAKE3_BACKEND_ENV]: 'portable' })).toBeUndefined();
    const script = `
      const { blake3Backend, blake3Hex, createBlake3 } = await import(${JSON.stringify(new URL('../dist/digest.js', import.meta.url).href)});
      const data = Uint8Array.from({ length: 102400 }, (_, i) => i % 251);
      const h = await createBlake3(); h.update(data);
      console.log(JSON.stringify([blake3Backend(), blake3Hex(data), h.digestHex()]));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, [BLAKE3_BACKEND_ENV]: 'portable' },
      encoding: 'utf8',
    });
    const expected = 'bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085';
    expect(JSON.parse(out)).toEqual(['portable', expected, expected]);
  });
});
