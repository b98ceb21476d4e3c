import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';
import { EnvelopeError } from './errors.js';
import { DEFAULT_JSON_LIMITS } from './json-limits.js';
import { type ParseJsonOptions, parseJson } from './strict-json.js';

/** Asserts that parsing `text` throws an EnvelopeError with code invalid_json. */
function refuses(text: string, options?: ParseJsonOptions): EnvelopeError {
  let caught: unknown;
  try {
    parseJson(text, options);
  } catch (err) {
    caught = err;
  }
  expect(caught, JSON.stringify(text).slice(0, 80)).toBeInstanceOf(EnvelopeError);
  const e = caught as EnvelopeError;
  expect(e.code).toBe('invalid_json');
  return e;
}

/** Parses with both parsers; fails if parseJson accepts what JSON.parse refuses or reads it differently. */
function differential(text: string, options?: ParseJsonOptions): void {
  let reference: { ok: true; value: unknown } | { ok: false };
  try {
    reference = { ok: true, value: JSON.parse(text) };
  } catch {
    reference = { ok: false };
  }
  let ours: { ok: true; value: unknown } | { ok: false };
  try {
    ours = { ok: true, value: parseJson(text, options) };
  } catch (err) {
    expect(err).toBeInstanceOf(EnvelopeError);
    expect((err as EnvelopeError).code).toBe('invalid_json');
    ours = { ok: false };
  }
  if (ours.ok) {
    expect(reference.ok, `accepted what JSON.parse refuses: ${JSON.stringify(text)}`).toBe(true);
    if (reference.ok) expect(ours.value).toStrictEqual(reference.value);
  }
}

const key = fc.string({ unit: 'grapheme', maxLength: 8 });
const str = fc.string({ unit: 'grapheme', maxLength: 16 });
const { intJson } = fc.letrec<{ intJson: unknown }>((tie) => ({
  intJson: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    str,
    fc.array(tie('intJson'), { maxLength: 5 }),
    fc.dictionary(key, tie('intJson'), { maxKeys: 5, noNullPrototype: true }),
  ),
}));
const anyJson = fc.jsonValue({ maxDepth: 6, stringUnit: 'grapheme' });
const indent = fc.constantFrom(undefined, 0, 1, 2, '\t', '\r\n ');

describe('agreement with JSON.parse on valid text', () => {
  it('integers only (the default)', () => {
    fc.assert(
      fc.property(intJson, indent, (v, space) => {
        const text = JSON.stringify(v, null, space as string | number | undefined);
        expect(parseJson(text)).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('doubles with integersOnly: false', () => {
    fc.assert(
      fc.property(anyJson, indent, (v, space) => {
        const text = JSON.stringify(v, null, space as string | number | undefined);
        expect(parseJson(text, { integersOnly: false })).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('number spellings JSON allows', () => {
    for (const t of ['0', '-0', '1', '-1', '123456789', '9007199254740991', '-9007199254740991']) {
      expect(Object.is(parseJson(t), JSON.parse(t))).toBe(true);
    }
    for (const t of [
      '1.5',
      '-0.0',
      '1e3',
      '1E+3',
      '1e-3',
      '2.5E-10',
      '1.7976931348623157e308',
      '5e-324',
      '0.1',
    ]) {
      expect(Object.is(parseJson(t, { integersOnly: false }), JSON.parse(t))).toBe(true);
      refuses(t);
    }
  });

  it('numbers of any length (a long fraction is valid JSON)', () => {
    const long = `0.${'0'.repeat(500)}1`;
    expect(parseJson(`[${long},1]`, { integersOnly: false })).toStrictEqual(JSON.parse(`[${long},1]`));
    const digits = `1.${'3'.repeat(1000)}`;
    expect(parseJson(digits, { integersOnly: false })).toBe(JSON.parse(digits));
    const e = refuses(`{"n":${'1'.repeat(500)}}`);
    expect(e.message).toContain('safe range');
    refuses(`-${'9'.repeat(400)}`, { integersOnly: false }); // -Infinity as a double: out of range
  });

  it('white space JSON allows, and no other', () => {
    expect(parseJson(' \t\r\n[ 1 ,\n2 ] \n')).toEqual([1, 2]);
    for (const ws of ['\u00a0', '\ufeff', '\u2028', '\v', '\f']) refuses(`${ws}1`);
    refuses('1\u00a0');
  });
});

describe('refusals (code invalid_json)', () => {
  it('duplicate keys, also nested and after escapes', () => {
    refuses('{"a":1,"a":2}');
    refuses('{"a":1,"b":{"c":1,"c":1}}');
    refuses('[{"x":[{"k":1,"k":1}]}]');
    refuses('{"a":1,"\\u0061":2}');
    refuses('{"__proto__":1,"__proto__":2}');
    expect(parseJson('{"a":{"a":1},"b":{"a":1}}')).toEqual({ a: { a: 1 }, b: { a: 1 } });
  });

  it('syntax that JSON.parse also refuses', () => {
    const bad = [
      '',
      ' ',
      '[1,]',
      '{"a":1,}',
      '[,1]',
      '{,}',
      '// c\n1',
      '/* c */1',
      '1 // c',
      "{'a':1}",
      "'a'",
      '01',
      '-01',
      '00',
      '1.',
      '.5',
      '+1',
      '-',
      '1e',
      'NaN',
      'Infinity',
      '-Infinity',
      'undefined',
      'True',
      'nul',
      '[1 2]',
      '{"a" 1}',
      '{"a":}',
      '{a:1}',
      '[1]]',
      '[1',
      '{"a":1',
      '"abc',
      '"\\x41"',
      '"\\u12"',
      '"\\u12g4"',
      '"\\"',
      '1 2',
      '{} {}',
      'nullx',
      'truefalse',
      '0x10',
    ];
    for (const t of bad) {
      expect(() => JSON.parse(t), t).toThrow();
      refuses(t);
    }
  });

  it('control characters inside strings', () => {
    for (let c = 0; c < 0x20; c++) refuses(`"a${String.fromCharCode(c)}b"`);
    refuses('{"k\n":1}');
    expect(parseJson('"a\u007fb"')).toBe('a\u007fb');
  });

  it('lone surrogates, escaped or raw, in values and keys', () => {
    for (const t of ['"\\ud800"', '"\\udfff"', '"a\\ud83d"', '"\\ude00\\ud83d"', '"\\ud83d\\u0041"'])
      refuses(t);
    refuses('"\ud800"');
    refuses('"x\udc00"');
    refuses('{"\\ud800":1}');
    refuses('{"\ud800":1}');
    expect(parseJson('"\\ud83d\\ude00"')).toBe('\ud83d\ude00');
    expect(parseJson('"\ud83d\ude00"')).toBe('\ud83d\ude00');
  });

  it('non-integers and unsafe integers by default', () => {
    for (const t of ['1.0', '1e0', '-1E2', '9007199254740992', '-9007199254740992', `1${'0'.repeat(30)}`]) {
      const e = refuses(`{"n":[${t}]}`);
      expect(e.field).toBe('$.n[0]');
    }
    refuses('1e400', { integersOnly: false });
    refuses('-1e400', { integersOnly: false });
  });

  it('depth beyond the limit (32 levels by default, matching canonicalJson)', () => {
    expect(DEFAULT_JSON_LIMITS.maxDepth).toBe(32);
    const arrays = (n: number): string => `${'['.repeat(n)}1${']'.repeat(n)}`;
    const objects = (n: number): string => `${'{"k":'.repeat(n)}1${'}'.repeat(n)}`;
    for (const make of [arrays, objects]) {
      const ok = parseJson(make(32));
      expect(canonicalJson(ok)).toBe(make(32));
      refuses(make(33));
    }
    expect(parseJson(arrays(3), { maxDepth: 3 })).toEqual([[[1]]]);
    refuses(arrays(4), { maxDepth: 3 });
    refuses('[[]]', { maxDepth: 1 });
    expect(parseJson('[]', { maxDepth: 1 })).toEqual([]);
    expect(parseJson('1', { maxDepth: 0 })).toBe(1);
    refuses('[]', { maxDepth: 0 });
    // Very deep input is refused, not a stack overflow.
    refuses(arrays(100_000), { maxBytes: 1_000_000 });
  });

  it('size beyond the limit, in UTF-8 bytes', () => {
    const text = `"${'\u20ac'.repeat(10)}"`; // 12 UTF-16 units, 32 UTF-8 bytes
    expect(parseJson(text, { maxBytes: 32 })).toBe('\u20ac'.repeat(10));
    const e = refuses(text, { maxBytes: 31 });
    expect(e.field).toBe('$');
    refuses(text, { maxBytes: 12 });
    const astral = `"${'\ud83d\ude00'.repeat(4)}"`; // 18 bytes
    expect(parseJson(astral, { maxBytes: 18 })).toBe('\ud83d\ude00'.repeat(4));
    refuses(astral, { maxBytes: 17 });
    expect(DEFAULT_JSON_LIMITS.maxBytes).toBe(1024 * 1024);
    refuses(`"${'a'.repeat(1024 * 1024 - 1)}"`);
    expect(parseJson(`"${'a'.repeat(1024 * 1024 - 2)}"`)).toHaveLength(1024 * 1024 - 2);
  });

  it('trailing garbage', () => {
    for (const t of ['1 x', '{}x', '[]]', '"a""b"', 'null null', '1\u0000']) refuses(t);
  });

  it('non-strings with a TypeError', () => {
    for (const v of [null, undefined, 1, Buffer.from('1'), ['1']]) {
      expect(() => parseJson(v as unknown as string)).toThrow(TypeError);
    }
  });

  it('names the JSON path and offset', () => {
    const e = refuses('{"a":{"b":[1,2,1.5]}}');
    expect(e.field).toBe('$.a.b[2]');
    expect(e.message).toContain('$.a.b[2]');
    expect(e.message).toMatch(/offset \d+/);
  });
});

describe('__proto__ and other special keys', () => {
  it('"__proto__" is an ordinary own property and does not pollute prototypes', () => {
    const v = parseJson('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    expect(Object.hasOwn(v, '__proto__')).toBe(true);
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ polluted: true });
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect((Object.prototype as { polluted?: unknown }).polluted).toBeUndefined();
    expect(v).toStrictEqual(JSON.parse('{"__proto__":{"polluted":true},"a":1}'));
  });

  it('nested "__proto__", "constructor" and "prototype" keys stay data', () => {
    const v = parseJson('{"constructor":{"prototype":{"x":1}},"b":[{"__proto__":[]}]}') as Record<
      string,
      unknown
    >;
    expect(Object.keys(v)).toEqual(['constructor', 'b']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    const inner = (v.b as Record<string, unknown>[])[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect(Array.isArray(Object.getOwnPropertyDescriptor(inner, '__proto__')?.value)).toBe(true);
  });

  it('returns plain objects and arrays', () => {
    const v = parseJson('{"a":{},"b":[]}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(v.a)).toBe(Object.prototype);
    expect(Array.isArray(v.b)).toBe(true);
  });
});

describe('fuzz', () => {
  it('junk text only ever throws EnvelopeError (invalid_json), and agrees with JSON.parse when it accepts', () => {
    const junk = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.string({
        unit: fc.constantFrom(...'{}[],:"\\ -+.eE0123456789tfnulrsa/\'\n\t'.split('')),
        maxLength: 40,
      }),
    );
    fc.assert(
      fc.property(junk, fc.boolean(), (text, integersOnly) => differential(text, { integersOnly })),
      { numRuns: 5000 },
    );
  });

  it('mutated valid JSON: refused or read exactly as JSON.parse reads it', () => {
    const mutation = fc.tuple(
      fc.nat(),
      fc.constantFrom('insert', 'delete', 'replace'),
      fc.constantFrom(...'{}[],:"\\ -.e01a\u0000\ud800'.split('')),
    );
    fc.assert(
      fc.property(anyJson, fc.array(mutation, { minLength: 1, maxLength: 3 }), (v, edits) => {
        let text = JSON.stringify(v);
        for (const [at, op, ch] of edits) {
          const i = text.length === 0 ? 0 : at % text.length;
          if (op === 'insert') text = text.slice(0, i) + ch + text.slice(i);
          else if (op === 'delete') text = text.slice(0, i) + text.slice(i + 1);
          else text = text.slice(0, i) + ch + text.slice(i + 1);
        }
        differential(text, { integersOnly: false });
        differential(text);
      }),
      { numRuns: 3000 },
    );
  });
});
