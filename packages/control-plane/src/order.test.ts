import { MAX_CONFIG_VALUES } from '@heddle/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlaneError } from './errors.js';
import { newOrderId, orderRecord, type PlaceOrderInput, parseOrder } from './order.js';

const HASH = 'ab'.repeat(32);
const NODE = '0123456789abcdef'.repeat(2);
const PKG = { workload: 'hello', version: '1.0.0', manifest_hash: HASH, package_id: 'pkg-1' };

/** The PlaneError `parseOrder(input)` throws. */
function refusal(input: unknown): PlaneError {
  try {
    parseOrder(input);
  } catch (err) {
    expect(err).toBeInstanceOf(PlaneError);
    return err as PlaneError;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('parseOrder', () => {
  it('refuses at the operator boundary what the host would refuse in the place body (one schema)', () => {
    // The host takes at most MAX_CONFIG_VALUES values; an order used to accept more and fail on the host.
    const values = Object.fromEntries(Array.from({ length: MAX_CONFIG_VALUES + 1 }, (_, i) => [`v${i}`, i]));
    const err = refusal({ manifest_hash: HASH, values });
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('values');
    const ok = Object.fromEntries(Array.from({ length: MAX_CONFIG_VALUES }, (_, i) => [`v${i}`, i]));
    expect(parseOrder({ manifest_hash: HASH, values: ok }).values).toEqual(ok);
    expect(refusal({ manifest_hash: HASH, mode: { type: 'interval', secs: 86_401 } }).field).toBe(
      'mode.secs',
    );
  });

  it('accepts an order by package directory or by manifest hash, every field given', () => {
    expect(parseOrder({ package_dir: '/pkgs/hello' })).toEqual({ package_dir: '/pkgs/hello' });
    expect(parseOrder({ manifest_hash: HASH })).toEqual({ manifest_hash: HASH });
    const full: PlaceOrderInput = {
      manifest_hash: HASH,
      node: NODE,
      prefer: [NODE],
      avoid: ['f'.repeat(32)],
      mode: { type: 'interval', secs: 60 },
      values: { greeting: 'hi', count: 3, loud: true, none: null },
      start: false,
      allow_emulated: true,
      dry_run: true,
    };
    expect(parseOrder(full)).toEqual(full);
    for (const mode of [{ type: 'once' }, { type: 'listener' }, { type: 'interval', secs: 86_400 }]) {
      expect(parseOrder({ package_dir: 'p', mode }).mode).toEqual(mode);
    }
  });

  it.each([
    ['both package_dir and manifest_hash', { package_dir: 'p', manifest_hash: HASH }, 'package_dir'],
    ['neither package_dir nor manifest_hash', {}, 'package_dir'],
    ['an empty package_dir', { package_dir: '' }, 'package_dir'],
    ['a manifest hash in upper case', { manifest_hash: HASH.toUpperCase() }, 'manifest_hash'],
    ['a short manifest hash', { manifest_hash: 'ab' }, 'manifest_hash'],
    ['interval secs 0', { package_dir: 'p', mode: { type: 'interval', secs: 0 } }, 'mode.secs'],
    ['interval secs over a day', { package_dir: 'p', mode: { type: 'interval', secs: 86_401 } }, 'mode.secs'],
    ['fractional interval secs', { package_dir: 'p', mode: { type: 'interval', secs: 1.5 } }, 'mode.secs'],
    ['interval without secs', { package_dir: 'p', mode: { type: 'interval' } }, 'mode.secs'],
    ['an unknown mode', { package_dir: 'p', mode: { type: 'cron' } }, 'mode.type'],
    ['a node id that is not 32 hex', { package_dir: 'p', node: 'node-1' }, 'node'],
    ['a node id in upper case', { package_dir: 'p', node: NODE.toUpperCase() }, 'node'],
    ['a bad preferred node', { package_dir: 'p', prefer: ['x'] }, 'prefer.0'],
    ['a bad second avoided node', { package_dir: 'p', avoid: [NODE, 'x'] }, 'avoid.1'],
    ['too many preferred nodes', { package_dir: 'p', prefer: Array(65).fill(NODE) }, 'prefer'],
    ['a value that is an object', { package_dir: 'p', values: { greeting: { a: 1 } } }, 'values.greeting'],
    ['a value that is a list', { package_dir: 'p', values: { count: [1] } }, 'values.count'],
    ['a value too long', { package_dir: 'p', values: { s: 'x'.repeat(4097) } }, 'values.s'],
    ['a non-boolean start', { package_dir: 'p', start: 'yes' }, 'start'],
    ['a non-boolean allow_emulated', { package_dir: 'p', allow_emulated: 1 }, 'allow_emulated'],
  ])('refuses %s, naming the field', (_what, input, field) => {
    const err = refusal(input);
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe(field);
    expect(err.message).toContain(`order ${field}:`);
  });

  it('refuses a config field name that is not one, naming values and the key', () => {
    const err = refusal({ package_dir: 'p', values: { 'Bad-Key': 1 } });
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('values.Bad-Key');
  });

  // An unknown field is refused and named in the message; its `field` is `$` (zod reports unrecognized
  // keys at the object's path), so `field` is not asserted here (see the report).
  it('refuses an unknown field, naming it in the message, and a non-object as the root', () => {
    const unknown = refusal({ package_dir: 'p', colour: 'red' });
    expect(unknown.code).toBe('invalid_input');
    expect(unknown.message).toContain('"colour"');
    for (const junk of [null, 'p', 42, [], undefined]) {
      const err = refusal(junk);
      expect(err.code).toBe('invalid_input');
      expect(err.field).toBe('$');
    }
  });

  it('refuses arbitrary junk only with invalid_input, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.object(), fc.dictionary(fc.string(), fc.anything())), (junk) => {
        try {
          parseOrder(junk);
        } catch (err) {
          if (!(err instanceof PlaneError) || err.code !== 'invalid_input') throw err;
          expect(typeof err.field).toBe('string');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses junk mixed into a valid order only with invalid_input', () => {
    const keys = ['node', 'prefer', 'avoid', 'mode', 'values', 'start', 'allow_emulated', 'dry_run', 'extra'];
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.anything(), (key, junk) => {
        try {
          parseOrder({ manifest_hash: HASH, [key]: junk });
        } catch (err) {
          if (!(err instanceof PlaneError) || err.code !== 'invalid_input') throw err;
          if (key !== 'extra') expect(err.field?.split('.')[0]).toBe(key);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('orderRecord', () => {
  it('fills the defaults: mode once, start true, no values, no emulation, no node', () => {
    const r = orderRecord(parseOrder({ package_dir: 'p' }), PKG, 1234);
    expect(r).toEqual({
      order_id: expect.stringMatching(/^o-[0-9a-f]{16}$/),
      ...PKG,
      mode: { type: 'once' },
      values: {},
      start: true,
      node: null,
      prefer: [],
      avoid: [],
      allow_emulated: false,
      migratable: true,
      created_at_ms: 1234,
    });
  });

  it("keeps an operator's migratable false (the workload needs its node)", () => {
    expect(orderRecord(parseOrder({ package_dir: 'p', migratable: false }), PKG, 1).migratable).toBe(false);
    expect(() => parseOrder({ package_dir: 'p', migratable: 'no' })).toThrow(
      expect.objectContaining({ field: 'migratable' }),
    );
  });

  it('keeps what the order gives, with copies of its node lists', () => {
    const prefer = [NODE];
    const input: PlaceOrderInput = {
      manifest_hash: HASH,
      node: NODE,
      prefer,
      avoid: ['f'.repeat(32)],
      mode: { type: 'listener' },
      values: { a: 1 },
      start: false,
      allow_emulated: true,
    };
    const r = orderRecord(input, PKG, 5);
    expect(r).toMatchObject({
      node: NODE,
      prefer: [NODE],
      avoid: ['f'.repeat(32)],
      mode: { type: 'listener' },
      values: { a: 1 },
      start: false,
      allow_emulated: true,
      created_at_ms: 5,
    });
    expect(r.prefer).not.toBe(prefer);
  });
});

describe('newOrderId', () => {
  it('is o- and 16 lower-case hex, and new every time', () => {
    const ids = Array.from({ length: 1000 }, newOrderId);
    for (const id of ids) expect(id).toMatch(/^o-[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
