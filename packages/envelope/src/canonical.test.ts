import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalJson } from './canonical.js';
import { EnvelopeError } from './errors.js';
import { DEFAULT_JSON_LIMITS } from './json-limits.js';
import { parseJson } from './strict-json.js';

/** Asserts that `f` throws an EnvelopeError with code canonical_json naming `field`. */
function refuses(f: () => unknown, field?: string): void {
  let caught: unknown;
  try {
    f();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(EnvelopeError);
  const e = caught as EnvelopeError;
  expect(e.code).toBe('canonical_json');
  if (field !== undefined) {
    expect(e.field).toBe(field);
    expect(e.message).toContain(field);
  }
}

function nest(depth: number, leaf: unknown = 1, kind: 'array' | 'object' = 'array'): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { k: v };
  return v;
}

// Integer-only JSON values with well-formed strings (what canonicalJson accepts).
const key = fc.string({ unit: 'grapheme', maxLength: 8 });
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc.integer({ min: -1000, max: 1000 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 10 }),
    fc.array(tie('json'), { maxLength: 5 }),
    fc.dictionary(key, tie('json'), { maxKeys: 6 }),
  ),
}));

/**
 * Reference: for integer-only values JCS is JSON.stringify of each scalar and key, with object members
 * written in the order of their keys sorted by UTF-16 code units. Objects are written by hand: an
 * object cannot carry that order itself, since JavaScript enumerates integer-like keys ("0") first.
 */
function sortedStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedStringify).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const src = v as Record<string, unknown>;
    const keys = Object.keys(src)
      .filter((k) => src[k] !== undefined)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedStringify(src[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The same value with every object's keys inserted in a shuffled order. */
function reorder(v: unknown, rand: () => number): unknown {
  if (Array.isArray(v)) return v.map((x) => reorder(x, rand));
  if (v !== null && typeof v === 'object') {
    const src = v as Record<string, unknown>;
    const keys = Object.keys(src);
    for (let i = keys.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [keys[i], keys[j]] = [keys[j] as string, keys[i] as string];
    }
    const out: Record<string, unknown> = {};
    for (const k of keys) Object.defineProperty(out, k, { value: reorder(src[k], rand), enumerable: true });
    return out;
  }
  return v;
}

describe('RFC 8785 examples (integer subset)', () => {
  it('sorts property names by UTF-16 code units (RFC 8785 section 3.2.3)', () => {
    const input = parseJson(`{
      "\\u20ac": "Euro Sign",
      "\\r": "Carriage Return",
      "\\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\\ud83d\\ude00": "Emoji: Grinning Face",
      "\\u0080": "Control",
      "\\u00f6": "Latin Small Letter O With Diaeresis"
    }`);
    const expected =
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
    expect(canonicalJson(input)).toBe(expected);
    // Code-point order would put U+1F600 after U+FB33; UTF-16 order puts the surrogate 0xD83D first.
    expect(canonicalJson(input).indexOf('\ud83d')).toBeLessThan(canonicalJson(input).indexOf('\ufb33'));
  });

  it('serialises strings and literals as the RFC 8785 section 3.2.2 example does', () => {
    const input = parseJson(`{
      "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
      "literals": [null, true, false]
    }`);
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('escapes exactly the control characters, quote and backslash', () => {
    for (let c = 0; c < 0x20; c++) {
      const short: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r' };
      const expected = short[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
      expect(canonicalJson(String.fromCharCode(c))).toBe(`"${expected}"`);
    }
    expect(canonicalJson('"\\')).toBe('"\\"\\\\"');
    // Not escaped: DEL, U+2028/U+2029, slash, non-ASCII, astral characters.
    for (const s of ['\u007f', '\u2028', '\u2029', '/', '\u00e9', '\ud83d\ude00', '\ufeff']) {
      expect(canonicalJson(s)).toBe(`"${s}"`);
    }
  });

  it('writes integers in shortest form, with -0 as 0', () => {
    expect(canonicalJson([0, -0, 1, -1, 10, 1e15, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER])).toBe(
      '[0,0,1,-1,10,1000000000000000,9007199254740991,-9007199254740991]',
    );
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson({ a: -0 })).toBe('{"a":0}');
  });

  it('has no insignificant white space, and canonicalBytes is its UTF-8', () => {
    const v = { b: [1, { d: true, c: null }], a: 'x y', é: '€' };
    expect(canonicalJson(v)).toBe('{"a":"x y","b":[1,{"c":null,"d":true}],"é":"€"}');
    expect(Buffer.from(canonicalBytes(v)).toString('utf8')).toBe(canonicalJson(v));
    expect(canonicalBytes('€')).toEqual(Uint8Array.of(0x22, 0xe2, 0x82, 0xac, 0x22));
  });
});

describe('integer-like keys', () => {
  it('sorts them as strings by UTF-16 code units, not first as JavaScript enumerates them', () => {
    // JSON.stringify({ a: 3, 10: 4, 9: 5, '': 2, 0: 1 }) would put "0", "9", "10" first.
    expect(canonicalJson({ a: 3, 10: 4, 9: 5, '': 2, 0: 1 })).toBe('{"":2,"0":1,"10":4,"9":5,"a":3}');
    expect(canonicalJson({ '': { 0: null, '': null } })).toBe('{"":{"":null,"0":null}}');
  });
});

describe('accepted shapes', () => {
  it('top-level scalars, empty containers, null-prototype objects, shared references', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson('')).toBe('""');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
    const bare = Object.create(null) as Record<string, unknown>;
    bare.z = 1;
    bare.a = 2;
    expect(canonicalJson(bare)).toBe('{"a":2,"z":1}');
    const shared = { x: 1 };
    expect(canonicalJson([shared, shared, { s: shared }])).toBe('[{"x":1},{"x":1},{"s":{"x":1}}]');
  });

  it('omits object members whose value is undefined (absent and undefined are the same)', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson({ a: undefined })).toBe('{}');
  });

  it('keeps "__proto__" as an ordinary key', () => {
    const v = parseJson('{"__proto__":{"x":1},"a":2}');
    expect(canonicalJson(v)).toBe('{"__proto__":{"x":1},"a":2}');
  });
});

describe('refusals (code canonical_json, with the path)', () => {
  it('non-integer and unsafe numbers', () => {
    refuses(() => canonicalJson(1.5), '$');
    refuses(() => canonicalJson({ a: 0.1 }), '$.a');
    refuses(() => canonicalJson({ a: [1, 2, Number.NaN] }), '$.a[2]');
    refuses(() => canonicalJson([Number.POSITIVE_INFINITY]), '$[0]');
    refuses(() => canonicalJson([Number.NEGATIVE_INFINITY]), '$[0]');
    refuses(() => canonicalJson({ n: 2 ** 53 }), '$.n');
    refuses(() => canonicalJson({ n: -(2 ** 53) }), '$.n');
    refuses(() => canonicalJson({ n: 1e21 }), '$.n');
    refuses(() => canonicalJson({ n: 5e-324 }), '$.n');
  });

  it('bigint, symbol, function, undefined outside an object member', () => {
    refuses(() => canonicalJson({ b: 1n }), '$.b');
    refuses(() => canonicalJson([Symbol('s')]), '$[0]');
    refuses(() => canonicalJson({ f: () => 1 }), '$.f');
    refuses(() => canonicalJson({ toJSON: () => 1 }), '$.toJSON');
    refuses(() => canonicalJson([1, undefined]), '$[1]');
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is being tested
    refuses(() => canonicalJson([1, , 3]), '$[1]');
    refuses(() => canonicalJson(undefined), '$');
  });

  it('objects that are not plain', () => {
    class Thing {
      a = 1;
    }
    const cases: [unknown, string][] = [
      [{ t: new Thing() }, '$.t'],
      [{ m: new Map([['a', 1]]) }, '$.m'],
      [{ s: new Set([1]) }, '$.s'],
      [{ d: new Date(0) }, '$.d'],
      [{ r: /x/ }, '$.r'],
      [{ u: new Uint8Array(2) }, '$.u'],
      [{ n: Object(1) }, '$.n'],
      [{ s: Object('str') }, '$.s'],
      [{ e: new Error('x') }, '$.e'],
      [{ p: Promise.resolve(1) }, '$.p'],
      [[{ o: Object.create({ inherited: 1 }) }], '$[0].o'],
    ];
    for (const [v, field] of cases) refuses(() => canonicalJson(v), field);
  });

  it('cycles', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    refuses(() => canonicalJson(a), '$.self');
    const arr: unknown[] = [1];
    arr.push({ back: arr });
    refuses(() => canonicalJson(arr), '$[1].back');
  });

  it('lone surrogates in strings and keys', () => {
    for (const s of ['\ud800', '\udfff', 'a\ud83d', '\ude00b', '\ude00\ud83d']) {
      refuses(() => canonicalJson({ v: s }), '$.v');
      refuses(() => canonicalJson({ [s]: 1 }), '$');
    }
    expect(canonicalJson('\ud83d\ude00')).toBe('"\ud83d\ude00"');
  });

  it('depth: the default allows 32 levels of nesting, not 33, for arrays and objects', () => {
    expect(DEFAULT_JSON_LIMITS.maxDepth).toBe(32);
    for (const kind of ['array', 'object'] as const) {
      expect(() => canonicalJson(nest(32, 1, kind))).not.toThrow();
      refuses(() => canonicalJson(nest(33, 1, kind)));
    }
    const limits = { maxDepth: 2, maxBytes: 1000 };
    expect(canonicalJson([[1]], limits)).toBe('[[1]]');
    refuses(() => canonicalJson([[[1]]], limits), '$[0][0]');
    refuses(() => canonicalJson({ a: { b: { c: 1 } } }, limits), '$.a.b');
  });

  it('size: bounded in UTF-8 bytes, exactly', () => {
    const euro = '\u20ac'.repeat(10); // 10 UTF-16 units, 30 UTF-8 bytes; 32 with the quotes
    expect(canonicalJson(euro, { maxDepth: 4, maxBytes: 32 })).toBe(`"${euro}"`);
    refuses(() => canonicalJson(euro, { maxDepth: 4, maxBytes: 31 }), '$');
    refuses(() => canonicalJson(euro, { maxDepth: 4, maxBytes: 12 }), '$');
    const ascii = 'a'.repeat(30);
    expect(canonicalJson([ascii], { maxDepth: 4, maxBytes: 34 })).toBe(`["${ascii}"]`);
    refuses(() => canonicalJson([ascii], { maxDepth: 4, maxBytes: 33 }));
    refuses(() => canonicalJson('x'.repeat(DEFAULT_JSON_LIMITS.maxBytes)));
  });
});

describe('properties', () => {
  it('equals JSON.stringify with keys sorted by UTF-16 code units', () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(canonicalJson(v)).toBe(sortedStringify(v));
      }),
      { numRuns: 1000 },
    );
  });

  it('is stable through parseJson: canonicalJson(parseJson(canonicalJson(x))) === canonicalJson(x)', () => {
    fc.assert(
      fc.property(json, (v) => {
        const c = canonicalJson(v);
        expect(canonicalJson(parseJson(c))).toBe(c);
      }),
      { numRuns: 1000 },
    );
  });

  it('does not depend on key insertion order', () => {
    fc.assert(
      fc.property(json, fc.integer(), (v, seed) => {
        let state = seed >>> 0 || 1;
        const rand = (): number => {
          state = (state * 1103515245 + 12345) >>> 0;
          return state / 2 ** 32;
        };
        expect(canonicalJson(reorder(v, rand))).toBe(canonicalJson(v));
      }),
      { numRuns: 500 },
    );
  });

  it('strings of arbitrary UTF-16 units: canonical iff well formed, else refused', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), (s) => {
        if (s.isWellFormed()) expect(canonicalJson(s)).toBe(JSON.stringify(s));
        else refuses(() => canonicalJson([s]), '$[0]');
      }),
      { numRuns: 1000 },
    );
  });

  it('doubles: refused unless a safe integer', () => {
    fc.assert(
      fc.property(fc.double(), (d) => {
        if (Number.isSafeInteger(d)) expect(canonicalJson(d)).toBe(String(Object.is(d, -0) ? 0 : d));
        else refuses(() => canonicalJson({ d }), '$.d');
      }),
      { numRuns: 1000 },
    );
  });
});
