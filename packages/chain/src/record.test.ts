import { canonicalJson } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalPayload } from './canonical.js';
import { isCanonicalJsonBytes } from './canonical-bytes.js';
import { CHAIN_FILE_HEADER, scanChainBytes } from './file-format.js';
import { encodeEvent, openMemoryChain } from './index.js';
import { isRecordProblem, parseRecord } from './record.js';

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    fc.string({ unit: 'binary' }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('canonicalPayload', () => {
  it('refuses what envelope refuses, naming the path', () => {
    const bad: unknown[] = [
      1.5,
      Number.NaN,
      2 ** 60,
      { a: [1, { b: undefined, c: () => 1 }] },
      '\ud800',
      new Date(0),
    ];
    for (const v of bad) {
      expect(() => canonicalJson(v)).toThrow();
      expect(() => canonicalPayload(v)).toThrow(expect.objectContaining({ code: 'invalid_payload' }));
    }
    expect(() => canonicalPayload({ a: { b: 0.5 } })).toThrow(
      expect.objectContaining({ field: 'payload.a.b' }),
    );
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(() => canonicalPayload(deep)).toThrow(expect.objectContaining({ code: 'invalid_payload' }));
    expect(() => canonicalPayload('x'.repeat(2 * 1024 * 1024))).toThrow(
      expect.objectContaining({ code: 'invalid_payload' }),
    );
  });
});

describe('parseRecord', () => {
  it('round-trips the records of arbitrary payloads', async () => {
    const chain = await openMemoryChain();
    await fc.assert(
      fc.asyncProperty(json, async (payload) => {
        const e = await chain.append('workload', 'k', payload);
        const text = encodeEvent(e);
        expect(text).toBe(canonicalJson(e));
        const r = parseRecord(Buffer.from(text));
        expect(isRecordProblem(r)).toBe(false);
        if (!isRecordProblem(r)) {
          expect(r.payload).toEqual(e.payload);
          expect(r.payloadHashOk).toBe(true);
          expect(r.hashOk).toBe(true);
          expect(r.hash).toBe(e.hash);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on junk, and refuses it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        const r = parseRecord(Buffer.from(bytes));
        expect(isRecordProblem(r)).toBe(true);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
        expect(isRecordProblem(parseRecord(Buffer.from(s)))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws on mutated valid records; accepts only the original bytes', async () => {
    const chain = await openMemoryChain();
    const e = await chain.append('workload.host', 'workload.place', {
      a: [1, 'two', { three: null }],
      é: true,
    });
    const good = Buffer.from(encodeEvent(e));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (edits) => {
          const b = Buffer.from(good);
          for (const [at, v] of edits) b[at] = v;
          const r = parseRecord(b);
          if (b.equals(good)) return;
          // Either refused, or parsed but then caught by a hash check.
          if (!isRecordProblem(r)) {
            const verifies = r.payloadHashOk && r.hashOk;
            expect(verifies).toBe(false);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('scanning junk files never throws', () => {
    const header = Buffer.from(`${CHAIN_FILE_HEADER}\n`);
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.constant('\n'))),
        (parts) => {
          const buf = Buffer.concat([header, Buffer.from(parts.join(''))]);
          const r = scanChainBytes(buf, true);
          expect(r.validLength).toBeLessThanOrEqual(buf.length);
          expect(r.failure === null || r.tornTail === null).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('isCanonicalJsonBytes', () => {
  // Stored payloads are valid UTF-8, so their decoded text is well-formed; the validator runs on bytes.
  const isCanonicalJsonText = (t: string): boolean =>
    t.isWellFormed() && isCanonicalJsonBytes(Buffer.from(t));
  const reference = (t: string): boolean => {
    try {
      return canonicalPayload(JSON.parse(t)) === t;
    } catch {
      return false;
    }
  };
  const alphabet = fc.constantFrom(
    ...'{}[]":,\\0123456789-.eEtrufalsn u\u00e9\ud83d\ude00\ud800\u0001\u2028/'.split(''),
  );

  it('accepts exactly the canonical texts (against parse + re-encode)', () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(isCanonicalJsonText(canonicalJson(v))).toBe(true);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        json,
        fc.array(fc.tuple(fc.nat(), fc.nat(3), alphabet), { minLength: 1, maxLength: 3 }),
        (v, edits) => {
          let t = canonicalJson(v);
          for (const [pos, op, ch] of edits) {
            const p = t.length === 0 ? 0 : pos % (t.length + 1);
            if (op === 0) t = t.slice(0, p) + ch + t.slice(p);
            else if (op === 1) t = t.slice(0, p) + t.slice(p + 1);
            else t = t.slice(0, p) + ch + t.slice(p + 1);
          }
          expect(isCanonicalJsonText(t), JSON.stringify(t)).toBe(reference(t));
        },
      ),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'{}[]":,0123456789-tfn'.split('')), maxLength: 30 }),
        (t) => {
          expect(isCanonicalJsonText(t), JSON.stringify(t)).toBe(reference(t));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('decides the edge cases like the encoder', () => {
    const cases = [
      '0',
      '-0',
      '-1',
      '01',
      '1.0',
      '1e3',
      '9007199254740991',
      '9007199254740992',
      '-9007199254740991',
      '"\\u001f"',
      '"\\u001F"',
      '"\\n"',
      '"\\u000a"',
      '"\\/"',
      '"\u007f"',
      '"\u2028"',
      '"\ud800"',
      '"\\ud800"',
      '"\ud83d\ude00"',
      '{"a":1,"b":2}',
      '{"b":1,"a":2}',
      '{"a":1,"a":2}',
      '{"\\n":1,"a":2}',
      '{"a":1,"\\n":2}',
      '{"__proto__":1}',
      '[1,2]',
      '[1,]',
      '[ 1]',
      'true',
      'tru',
      'null ',
      '',
      `${'['.repeat(32)}${']'.repeat(32)}`,
      `${'['.repeat(33)}${']'.repeat(33)}`,
    ];
    for (const t of cases) expect(isCanonicalJsonText(t), JSON.stringify(t)).toBe(reference(t));
  });
});
