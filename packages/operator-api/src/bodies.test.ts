// Request bodies and queries as the server adapter checks them: fast-check properties and junk.
import { HeddleError } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  AddNodeBodySchema,
  AddSeedBodySchema,
  AlertsQuerySchema,
  EmptyBodySchema,
  ForceQuerySchema,
  LogsQuerySchema,
  PinBodySchema,
  PlaceBodySchema,
  StopBodySchema,
} from './bodies.js';
import { parseBody, validate } from './body.js';
import { OPERATOR_ROUTES, ROUTE_NAMES } from './routes.js';

const hex = (n: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });
const tier = fc.constantFrom('discovered', 'paired', 'pinned');

/** The code a validation refuses with, or 'ok'; anything thrown that is not a HeddleError fails the test. */
function outcome(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (err) {
    if (!(err instanceof HeddleError)) throw err;
    expect(err.field).toEqual(expect.any(String));
    return err.code;
  }
}

describe('request bodies', () => {
  it('every body schema of the route table takes its valid bodies and refuses junk with invalid_input only', () => {
    const schemas = ROUTE_NAMES.flatMap((n) => {
      const body: z.ZodType<unknown> | null = OPERATOR_ROUTES[n].body;
      return body === null ? [] : [body];
    });
    expect(schemas.length).toBeGreaterThan(5);
    fc.assert(
      fc.property(fc.jsonValue(), (junk) => {
        for (const schema of schemas)
          expect(['ok', 'invalid_input']).toContain(outcome(() => validate(schema, junk, 'body')));
      }),
      { numRuns: 300 },
    );
  });

  it('AddNodeBody: any url, tier and optional key of the right form is taken', () => {
    fc.assert(
      fc.property(fc.webUrl(), tier, fc.option(hex(64), { nil: undefined }), (url, t, key) => {
        const body = { url, tier: t, ...(key === undefined ? {} : { key }) };
        expect(validate(AddNodeBodySchema, body, 'body')).toEqual(body);
      }),
    );
  });

  it('names the bad or unknown field', () => {
    const field = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (err) {
        if (err instanceof HeddleError) return `${err.code} ${err.field}`;
      }
      return undefined;
    };
    expect(field(() => validate(AddNodeBodySchema, { url: 'ws://x', tier: 'gold' }, 'body'))).toBe(
      'invalid_input tier',
    );
    expect(field(() => validate(PinBodySchema, { key: 'AB'.repeat(32) }, 'body'))).toBe('invalid_input key');
    expect(field(() => validate(EmptyBodySchema, { x: 1 }, 'body'))).toBe('invalid_input x');
    expect(field(() => validate(StopBodySchema, { grace_ms: 1.5 }, 'body'))).toBe('invalid_input grace_ms');
    expect(
      field(() =>
        validate(
          AddSeedBodySchema,
          { url: 'ftp://x', spki: 'ab'.repeat(32), token_file: '/t', tier: 'paired' },
          'body',
        ),
      ),
    ).toBe('invalid_input url');
    expect(field(() => validate(PlaceBodySchema, { package_dir: 'relative/dir' }, 'order'))).toBe(
      'invalid_input package_dir',
    );
    expect(field(() => validate(PlaceBodySchema, { manifest_hash: 'ab'.repeat(32), nope: 1 }, 'order'))).toBe(
      'invalid_input nope',
    );
  });

  it('parseBody: any bytes either parse to JSON or are refused with bad_json, never anything else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => {
        expect(['ok', 'bad_json']).toContain(outcome(() => parseBody(Buffer.from(bytes))));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(parseBody(Buffer.from(JSON.stringify(v)))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
    expect(parseBody(Buffer.alloc(0))).toEqual({});
    expect(outcome(() => parseBody(Buffer.from('{"a":1,"a":2}')))).toBe('bad_json');
    expect(outcome(() => parseBody(Buffer.from([0xff, 0xfe])))).toBe('bad_json');
  });
});

describe('queries', () => {
  it('flags take 1, true, empty, 0 and false; anything else is refused naming the parameter', () => {
    expect(validate(ForceQuerySchema, {}, 'query')).toEqual({ force: false });
    for (const v of ['', '1', 'true'])
      expect(validate(ForceQuerySchema, { force: v }, 'query')).toEqual({ force: true });
    for (const v of ['0', 'false'])
      expect(validate(AlertsQuerySchema, { unacknowledged: v }, 'query')).toEqual({ unacknowledged: false });
    fc.assert(
      fc.property(fc.string(), (v) => {
        const r = outcome(() => validate(ForceQuerySchema, { force: v }, 'query'));
        expect(r).toBe(['', '1', 'true', '0', 'false'].includes(v) ? 'ok' : 'invalid_input');
      }),
    );
    expect(outcome(() => validate(ForceQuerySchema, { other: '1' }, 'query'))).toBe('invalid_input');
  });

  it('lines is a whole number 1..10000', () => {
    expect(validate(LogsQuerySchema, {}, 'query')).toEqual({});
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), (n) => {
        expect(validate(LogsQuerySchema, { lines: String(n) }, 'query')).toEqual({ lines: n });
      }),
    );
    for (const v of ['0', '10001', '-1', '1.5', '', 'x', '99999999'])
      expect(outcome(() => validate(LogsQuerySchema, { lines: v }, 'query'))).toBe('invalid_input');
  });
});
