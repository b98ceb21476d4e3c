import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  fastCtlRequest,
  fastCtlResponse,
  fastRequestForm,
  parseFast,
  RequestFormSchema,
} from './fast-shapes.js';
import { CTL_METHODS } from './methods.js';
import { REFUSAL_CODES } from './refusal.js';
import { CtlRequestSchema } from './request.js';
import { CtlResponseSchema } from './response.js';
import { CONTROLLER_ID, DECISION, HOST_ID, T0 } from './test-fixtures.js';

const NONCE = 'ab'.repeat(16);

// Values that sit on either side of every rule the schemas check.
const interesting: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    undefined,
    null,
    true,
    0,
    -0,
    1,
    2,
    -1,
    1.5,
    2 ** 53,
    Number.NaN,
    '',
    '*',
    'x',
    'x'.repeat(128),
    'x'.repeat(129),
    'x'.repeat(4096),
    'x'.repeat(4097),
    CONTROLLER_ID,
    CONTROLLER_ID.toUpperCase(),
    `${CONTROLLER_ID}0`,
    NONCE,
    DECISION,
    DECISION.slice(1),
    'workload.status',
    'workload.place',
    'workload.describe',
    'no.such',
    'with space',
    'ok',
    'refused',
    'signature',
    'bogus_code',
    [],
    {},
    { n: 1 },
    Object.create(null),
    new Date(0),
    T0,
    T0 + 1,
    T0 + 300_000,
    T0 + 300_001,
  ),
  fc.constantFrom(...CTL_METHODS),
  fc.constantFrom(...REFUSAL_CODES),
  fc.jsonValue({ maxDepth: 2 }),
);

type Edit = readonly [key: string, value: unknown, drop: boolean];
const edits = (keys: readonly string[]): fc.Arbitrary<Edit[]> =>
  fc.array(fc.tuple(fc.constantFrom(...keys, 'extra'), interesting, fc.boolean()), { maxLength: 3 });

function edited(base: Record<string, unknown>, changes: readonly Edit[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value, drop] of changes) {
    if (drop) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** The fast path may decline anything, but what it accepts the schema accepts, with the same output. */
function agrees<T>(schema: z.ZodType<T>, fast: (v: unknown) => T | undefined, value: unknown): void {
  const mine = fast(value);
  const reference = schema.safeParse(value);
  if (mine !== undefined) {
    expect(reference.success, JSON.stringify(value)).toBe(true);
    if (reference.success) expect(mine).toStrictEqual(reference.data);
  }
  const combined = parseFast(schema, fast, value);
  expect(combined.success).toBe(reference.success);
  if (combined.success && reference.success) expect(combined.data).toStrictEqual(reference.data);
  if (!combined.success && !reference.success) expect(combined.error.issues).toEqual(reference.error.issues);
}

const request = (method: string, withDecision: boolean): Record<string, unknown> => ({
  version: 1,
  method,
  requester: CONTROLLER_ID,
  target: HOST_ID,
  nonce: NONCE,
  issued_at_ms: T0,
  expires_at_ms: T0 + 1000,
  ...(withDecision ? { decision_id: DECISION } : {}),
  body: { n: 1 },
});
const REQUEST_KEYS = Object.keys(request('workload.place', true));

const okResponse = {
  version: 1,
  method: 'workload.status',
  responder: HOST_ID,
  request_nonce: NONCE,
  outcome: { status: 'ok', result: { n: 1 } },
};
const refusedResponse = {
  ...okResponse,
  request_nonce: '',
  outcome: { status: 'refused', code: 'replay', reason: 'seen', authenticated: false },
};

describe('fast shape recognisers agree with the schemas', () => {
  it('accept the valid messages (so the fast path is actually taken)', () => {
    for (const method of CTL_METHODS) {
      expect(fastCtlRequest(request(method, true))).toStrictEqual(
        CtlRequestSchema.parse(request(method, true)),
      );
      expect(fastRequestForm(request(method, false))).toBeDefined();
    }
    expect(fastCtlResponse(okResponse)).toStrictEqual(CtlResponseSchema.parse(okResponse));
    expect(fastCtlResponse(refusedResponse)).toStrictEqual(CtlResponseSchema.parse(refusedResponse));
  });

  it('requests, complete format (signRequest)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CTL_METHODS), fc.boolean(), edits(REQUEST_KEYS), (m, d, changes) => {
        agrees(CtlRequestSchema, fastCtlRequest, edited(request(m, d), changes));
      }),
      { numRuns: 3000 },
    );
  });

  it('requests, form only (verifyRequest)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CTL_METHODS), fc.boolean(), edits(REQUEST_KEYS), (m, d, changes) => {
        agrees(RequestFormSchema, fastRequestForm, edited(request(m, d), changes));
      }),
      { numRuns: 3000 },
    );
  });

  it('responses and their outcomes', () => {
    const outcomeKeys = ['status', 'result', 'code', 'reason', 'authenticated'];
    fc.assert(
      fc.property(
        fc.constantFrom(okResponse, refusedResponse),
        edits(Object.keys(okResponse)),
        edits(outcomeKeys),
        (base, changes, outcomeChanges) => {
          const v = edited(base, changes);
          if (typeof v.outcome === 'object' && v.outcome !== null && outcomeChanges.length > 0) {
            v.outcome = edited(v.outcome as Record<string, unknown>, outcomeChanges);
          }
          agrees(CtlResponseSchema, fastCtlResponse, v);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('non-objects and odd objects go to the schema', () => {
    for (const v of [null, undefined, 1, 'x', [], [request('workload.status', false)], new Date(0)]) {
      expect(fastCtlRequest(v)).toBeUndefined();
      expect(fastRequestForm(v)).toBeUndefined();
      expect(fastCtlResponse(v)).toBeUndefined();
    }
    const withGetter = request('workload.status', false);
    Object.defineProperty(withGetter, 'extra', { get: () => 1, enumerable: true });
    agrees(CtlRequestSchema, fastCtlRequest, withGetter);
    const hidden = request('workload.status', false);
    Object.defineProperty(hidden, 'extra', { value: 1, enumerable: false });
    agrees(CtlRequestSchema, fastCtlRequest, hidden);
  });
});
