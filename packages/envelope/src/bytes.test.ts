import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, equalBytes, fromHex, fromUtf8, isBytes, isHex, toHex, utf8 } from './bytes.js';

describe('toHex / fromHex', () => {
  it('round-trips any bytes through lower-case hex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
        const hex = toHex(b);
        expect(hex).toMatch(/^(?:[0-9a-f]{2})*$/);
        expect(hex).toHaveLength(b.length * 2);
        expect(fromHex(hex)).toEqual(b);
        expect(fromHex(hex, b.length)).toEqual(b);
      }),
      { numRuns: 1000 },
    );
  });

  it('encodes known values and only the visible bytes of a view', () => {
    expect(toHex(new Uint8Array(0))).toBe('');
    expect(toHex(Uint8Array.of(0, 1, 0x7f, 0x80, 0xff))).toBe('00017f80ff');
    const big = Uint8Array.of(1, 2, 3, 4, 5, 6);
    expect(toHex(big.subarray(2, 4))).toBe('0304');
    expect(toHex(Buffer.from([0xab]))).toBe('ab');
  });

  it('returns a plain Uint8Array', () => {
    const b = fromHex('00ff');
    expect(Object.getPrototypeOf(b)).toBe(Uint8Array.prototype);
    expect([...b]).toEqual([0, 255]);
  });

  it('refuses upper case, odd length, other characters and non-strings (TypeError)', () => {
    for (const bad of [
      'A0',
      'aB',
      'ABCDEF',
      '0',
      'abc',
      'zz',
      '0x00',
      ' 00',
      '00 ',
      '0g',
      '-1',
      '\u0660\u0660',
      '00\n',
    ]) {
      expect(() => fromHex(bad), JSON.stringify(bad)).toThrow(TypeError);
    }
    for (const bad of [null, undefined, 0, ['00'], Uint8Array.of(0)]) {
      expect(() => fromHex(bad as unknown as string)).toThrow(TypeError);
    }
  });

  it('refuses a wrong expected length (TypeError)', () => {
    expect(() => fromHex('0011', 1)).toThrow(TypeError);
    expect(() => fromHex('0011', 3)).toThrow(TypeError);
    expect(() => fromHex('', 32)).toThrow(TypeError);
    expect(fromHex('', 0)).toHaveLength(0);
    expect(fromHex('00'.repeat(32), 32)).toHaveLength(32);
  });

  it('isHex checks form and length', () => {
    expect(isHex('00ff', 2)).toBe(true);
    expect(isHex('00FF', 2)).toBe(false);
    expect(isHex('00ff', 1)).toBe(false);
    expect(isHex('0g', 1)).toBe(false);
    expect(isHex(1234, 2)).toBe(false);
    expect(isHex(undefined, 0)).toBe(false);
  });
});

describe('equalBytes', () => {
  it('compares contents', () => {
    expect(equalBytes(new Uint8Array(0), new Uint8Array(0))).toBe(true);
    expect(equalBytes(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 3))).toBe(true);
    expect(equalBytes(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 4))).toBe(false);
    expect(equalBytes(Uint8Array.of(0, 2, 3), Uint8Array.of(1, 2, 3))).toBe(false);
    expect(equalBytes(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 3))).toBe(false);
    expect(equalBytes(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2))).toBe(false);
    expect(equalBytes(Buffer.from([1, 2]), Uint8Array.of(1, 2))).toBe(true);
    expect(equalBytes(Uint8Array.of(9, 1, 2).subarray(1), Uint8Array.of(1, 2))).toBe(true);
  });

  it('agrees with element-wise comparison', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (a, b) => {
        const expected = a.length === b.length && a.every((x, i) => x === b[i]);
        expect(equalBytes(a, b)).toBe(expected);
        expect(equalBytes(a, Uint8Array.from(a))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('concatBytes', () => {
  it('concatenates into a new array', () => {
    expect(concatBytes()).toEqual(new Uint8Array(0));
    const a = Uint8Array.of(1, 2);
    const joined = concatBytes(a, new Uint8Array(0), Uint8Array.of(3), Uint8Array.of(9, 4, 5).subarray(1));
    expect([...joined]).toEqual([1, 2, 3, 4, 5]);
    const single = concatBytes(a);
    expect(single).toEqual(a);
    single[0] = 7;
    expect(a[0]).toBe(1);
  });

  it('preserves every part in order', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 20 }), { maxLength: 8 }), (parts) => {
        expect([...concatBytes(...parts)]).toEqual(parts.flatMap((p) => [...p]));
      }),
    );
  });
});

describe('utf8 / fromUtf8 / isBytes', () => {
  it('round-trips well-formed text and refuses malformed UTF-8', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(fromUtf8(utf8(s))).toBe(s);
      }),
    );
    expect([...utf8('é€😀')]).toEqual([0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80]);
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
      expect(() => fromUtf8(Uint8Array.from(bad))).toThrow(TypeError);
    }
  });

  it('isBytes accepts Uint8Arrays (and Buffers) of the given length only', () => {
    expect(isBytes(new Uint8Array(3))).toBe(true);
    expect(isBytes(Buffer.alloc(3), 3)).toBe(true);
    expect(isBytes(new Uint8Array(3), 4)).toBe(false);
    expect(isBytes([1, 2, 3])).toBe(false);
    expect(isBytes(new Uint16Array(3))).toBe(false);
    expect(isBytes(null)).toBe(false);
    expect(isBytes('abc', 3)).toBe(false);
  });
});
