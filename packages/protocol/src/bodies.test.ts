import type { JsonValue } from '@heddle/envelope';
import { MAX_INTERVAL_SECS } from '@heddle/model';
import { COG_ID_RE } from '@heddle/package';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GRACE_MS,
  DEFAULT_LOG_LINES,
  MAX_CONFIG_VALUES,
  MAX_GRACE_MS,
  MAX_LOG_LINES,
} from './body-parts.js';
import { parseRequestBody } from './method-schemas.js';
import type { CtlMethod } from './methods.js';
import { Refusal } from './refusal.js';

const RUNS = { numRuns: 300 };
const HASH = 'ab'.repeat(32);
const INSTANCE = 'hello-cog-0123456789abcdef';

/** A valid place body, with `patch` applied on top. */
function place(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'hello-cog',
    manifest_hash: HASH,
    variant: 'x86_64-native',
    config: { mode: { type: 'once' }, values: {} },
    start: false,
    ...patch,
  };
}

/** The refusal `fn` throws (fails the test when it throws nothing or something else). */
function refusalOf(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (err) {
    if (err instanceof Refusal) return err;
    throw err;
  }
  throw new Error('expected a refusal, got none');
}

function expectInvalid(fn: () => unknown, field: string, method: string): void {
  const r = refusalOf(fn);
  expect(r.code).toBe('invalid_request');
  expect(r.authenticated).toBe(true);
  expect(r.field).toBe(field);
  expect(r.reason.startsWith(`${method} ${field}: `)).toBe(true);
}

describe('constants', () => {
  it('are the documented limits', () => {
    expect(MAX_GRACE_MS).toBe(120_000);
    expect(DEFAULT_GRACE_MS).toBe(5_000);
    expect(MAX_LOG_LINES).toBe(10_000);
    expect(DEFAULT_LOG_LINES).toBe(100);
    expect(MAX_CONFIG_VALUES).toBe(64);
  });
});

describe('parseRequestBody of workload.place and workload.load', () => {
  it('accepts a full valid body as is', () => {
    const body = place({
      config: {
        mode: { type: 'interval', secs: 30 },
        values: { greeting: 'hi', n: 2.5, on: true, none: null },
      },
      start: true,
    });
    expect(parseRequestBody('workload.place', body)).toEqual(body);
  });

  it('takes an optional request_id of the documented form, and refuses any other naming body.request_id', () => {
    for (const id of ['r', 'e2e-place-0001', '0f1e2d3c-aaaa-4bbb-8ccc-0123456789ab', `a${'.'.repeat(127)}`]) {
      expect(parseRequestBody('workload.place', place({ request_id: id }))).toEqual(
        place({ request_id: id }),
      );
    }
    expect(parseRequestBody('workload.load', place({ start: false }))).not.toHaveProperty('request_id');
    for (const bad of ['', '-leading', 'has space', `a${'b'.repeat(128)}`, 'ünï', 7, null]) {
      expectInvalid(
        () => parseRequestBody('workload.place', place({ request_id: bad })),
        'body.request_id',
        'workload.place',
      );
    }
  });

  it('defaults values to {} and start to false', () => {
    const parsed = parseRequestBody('workload.place', {
      name: 'c',
      manifest_hash: HASH,
      variant: 'wasm32-wasi',
      config: { mode: { type: 'listener' } },
    });
    expect(parsed.config.values).toEqual({});
    expect(parsed.start).toBe(false);
  });

  it('accepts every run mode and the interval bounds', () => {
    for (const mode of [
      { type: 'once' },
      { type: 'listener' },
      { type: 'interval', secs: 1 },
      { type: 'interval', secs: MAX_INTERVAL_SECS },
    ]) {
      expect(parseRequestBody('workload.place', place({ config: { mode } })).config.mode).toEqual(mode);
    }
  });

  it(`accepts exactly ${MAX_CONFIG_VALUES} config values`, () => {
    const values = Object.fromEntries(Array.from({ length: MAX_CONFIG_VALUES }, (_, i) => [`v${i}`, i]));
    const parsed = parseRequestBody('workload.load', place({ config: { mode: { type: 'once' }, values } }));
    expect(Object.keys(parsed.config.values)).toHaveLength(MAX_CONFIG_VALUES);
  });

  const tooMany = Object.fromEntries(Array.from({ length: MAX_CONFIG_VALUES + 1 }, (_, i) => [`v${i}`, i]));
  const once = { type: 'once' };
  it.each<[string, Record<string, unknown>, string]>([
    ['name missing', place({ name: undefined }), 'body.name'],
    ['name upper case', place({ name: 'Hello' }), 'body.name'],
    ['name too long', place({ name: `a${'b'.repeat(64)}` }), 'body.name'],
    ['name not a string', place({ name: 7 }), 'body.name'],
    ['manifest_hash short', place({ manifest_hash: 'ab' }), 'body.manifest_hash'],
    ['manifest_hash upper case', place({ manifest_hash: 'AB'.repeat(32) }), 'body.manifest_hash'],
    ['manifest_hash missing', place({ manifest_hash: undefined }), 'body.manifest_hash'],
    ['variant without arch', place({ variant: 'native' }), 'body.variant'],
    ['variant with upper case', place({ variant: 'X86_64-native' }), 'body.variant'],
    ['variant not a string', place({ variant: ['x86_64-native'] }), 'body.variant'],
    ['config missing', place({ config: undefined }), 'body.config'],
    ['config not an object', place({ config: 'once' }), 'body.config'],
    ['config unknown key', place({ config: { mode: once, values: {}, env: {} } }), 'body.config.env'],
    ['mode missing', place({ config: { values: {} } }), 'body.config.mode'],
    ['mode unknown type', place({ config: { mode: { type: 'daemon' } } }), 'body.config.mode.type'],
    ['interval secs 0', place({ config: { mode: { type: 'interval', secs: 0 } } }), 'body.config.mode.secs'],
    [
      'interval secs over the max',
      place({ config: { mode: { type: 'interval', secs: MAX_INTERVAL_SECS + 1 } } }),
      'body.config.mode.secs',
    ],
    [
      'interval secs fractional',
      place({ config: { mode: { type: 'interval', secs: 1.5 } } }),
      'body.config.mode.secs',
    ],
    ['interval secs missing', place({ config: { mode: { type: 'interval' } } }), 'body.config.mode.secs'],
    ['once with secs', place({ config: { mode: { type: 'once', secs: 1 } } }), 'body.config.mode.secs'],
    ['values not an object', place({ config: { mode: once, values: [] } }), 'body.config.values'],
    ['value an object', place({ config: { mode: once, values: { a: { b: 1 } } } }), 'body.config.values.a'],
    ['value an array', place({ config: { mode: once, values: { a: [1] } } }), 'body.config.values.a'],
    [
      'value string too long',
      place({ config: { mode: once, values: { a: 'x'.repeat(4097) } } }),
      'body.config.values.a',
    ],
    [
      'value key not a field name',
      place({ config: { mode: once, values: { Bad: 1 } } }),
      'body.config.values.Bad',
    ],
    ['too many values', place({ config: { mode: once, values: tooMany } }), 'body.config.values'],
    ['start not a boolean', place({ start: 'yes' }), 'body.start'],
    ['unknown top-level key', place({ extra: 1 }), 'body.extra'],
  ])('refuses %s', (_what, body, field) => {
    expectInvalid(() => parseRequestBody('workload.place', body), field, 'workload.place');
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['an array', [place()]],
    ['a string', 'place'],
    ['a number', 1],
    ['undefined', undefined],
  ])('refuses a body that is %s, naming body', (_what, body) => {
    expectInvalid(() => parseRequestBody('workload.load', body), 'body', 'workload.load');
  });
});

describe('parseRequestBody of the instance verbs', () => {
  it('accepts an empty body and a full one', () => {
    expect(parseRequestBody('workload.status', {})).toEqual({});
    const full = {
      instance_id: INSTANCE,
      grace_ms: MAX_GRACE_MS,
      include_departed: true,
      lines: MAX_LOG_LINES,
    };
    expect(parseRequestBody('workload.stop', full)).toEqual(full);
    expect(parseRequestBody('workload.logs', { grace_ms: 0, lines: 1 })).toEqual({
      grace_ms: 0,
      lines: 1,
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['instance_id without hex suffix', { instance_id: 'hello-cog' }, 'body.instance_id'],
    ['instance_id with upper-case hex', { instance_id: 'hello-cog-0123456789ABCDEF' }, 'body.instance_id'],
    ['instance_id with short hex', { instance_id: 'hello-cog-0123456789abcde' }, 'body.instance_id'],
    ['instance_id not a string', { instance_id: 5 }, 'body.instance_id'],
    ['grace_ms negative', { grace_ms: -1 }, 'body.grace_ms'],
    ['grace_ms over the max', { grace_ms: MAX_GRACE_MS + 1 }, 'body.grace_ms'],
    ['grace_ms fractional', { grace_ms: 1.5 }, 'body.grace_ms'],
    ['include_departed not a boolean', { include_departed: 1 }, 'body.include_departed'],
    ['lines 0', { lines: 0 }, 'body.lines'],
    ['lines over the max', { lines: MAX_LOG_LINES + 1 }, 'body.lines'],
    ['lines a string', { lines: '10' }, 'body.lines'],
    ['unknown key', { instance: INSTANCE }, 'body.instance'],
  ])('refuses %s', (_what, body, field) => {
    expectInvalid(() => parseRequestBody('workload.stop', body), field, 'workload.stop');
  });
});

/** Only a Refusal (invalid_request, authenticated) may come out of parseRequestBody. */
function parsesOrRefuses(method: CtlMethod, body: unknown): void {
  try {
    parseRequestBody(method, body);
  } catch (err) {
    expect(err).toBeInstanceOf(Refusal);
    const r = err as Refusal;
    expect(r.code).toBe('invalid_request');
    expect(r.authenticated).toBe(true);
    expect(r.field?.startsWith('body')).toBe(true);
  }
}

const isPlainObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

describe('parseRequestBody properties', () => {
  it('refuses any JSON value that is not an object with invalid_request naming body', () => {
    fc.assert(
      fc.property(
        fc.jsonValue().filter((v) => !isPlainObject(v)),
        (value) => {
          for (const method of ['workload.place', 'workload.stop', 'workload.revoke'] as const) {
            expectInvalid(() => parseRequestBody(method, value), 'body', method);
          }
        },
      ),
      RUNS,
    );
  });

  it('never throws anything but a Refusal for junk objects', () => {
    fc.assert(
      fc.property(
        fc.object({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true }),
        (obj) => {
          parsesOrRefuses('workload.place', obj);
          parsesOrRefuses('workload.status', obj);
        },
      ),
      RUNS,
    );
    fc.assert(
      fc.property(
        fc.anything({ withNullPrototype: true, withBigInt: true, withTypedArray: true }),
        (value) => {
          parsesOrRefuses('workload.place', value);
          parsesOrRefuses('workload.status', value);
        },
      ),
      RUNS,
    );
  });

  it('never throws anything but a Refusal for near-valid place bodies', () => {
    const keys = ['name', 'manifest_hash', 'variant', 'config', 'start'] as const;
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.anything(), (key, junk) => {
        parsesOrRefuses('workload.place', place({ [key]: junk }));
        parsesOrRefuses('workload.place', place({ config: { mode: junk } }));
        parsesOrRefuses('workload.place', place({ config: { mode: { type: 'once' }, values: { a: junk } } }));
      }),
      RUNS,
    );
  });

  const fieldName = fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/);
  const configValue: fc.Arbitrary<JsonValue> = fc.oneof(
    fc.string({ maxLength: 4096 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );
  const mode = fc.oneof(
    fc.constant({ type: 'once' as const }),
    fc.constant({ type: 'listener' as const }),
    fc.record({
      type: fc.constant('interval' as const),
      secs: fc.integer({ min: 1, max: MAX_INTERVAL_SECS }),
    }),
  );
  const placeArb = fc.record(
    {
      name: fc.stringMatching(COG_ID_RE),
      manifest_hash: fc.stringMatching(/^[0-9a-f]{64}$/),
      variant: fc.stringMatching(/^[a-z0-9_]{1,16}-[a-z]{1,16}$/),
      config: fc.record(
        { mode, values: fc.dictionary(fieldName, configValue, { maxKeys: MAX_CONFIG_VALUES }) },
        { requiredKeys: ['mode'] },
      ),
      start: fc.boolean(),
    },
    { requiredKeys: ['name', 'manifest_hash', 'variant', 'config'] },
  );

  it('round-trips valid generated place bodies (filling the defaults)', () => {
    fc.assert(
      fc.property(placeArb, (body) => {
        const parsed = parseRequestBody('workload.place', body);
        expect(parsed).toEqual({
          ...body,
          config: { ...body.config, values: body.config.values ?? {} },
          start: body.start ?? false,
        });
      }),
      RUNS,
    );
  });

  it('round-trips valid generated instance bodies', () => {
    const instanceArb = fc.record(
      {
        instance_id: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,63}-[0-9a-f]{16}$/),
        grace_ms: fc.integer({ min: 0, max: MAX_GRACE_MS }),
        include_departed: fc.boolean(),
        lines: fc.integer({ min: 1, max: MAX_LOG_LINES }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(instanceArb, (body) => {
        expect(parseRequestBody('workload.status', body)).toEqual(body);
      }),
      RUNS,
    );
  });
});
