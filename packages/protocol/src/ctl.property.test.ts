import type { JsonValue } from '@heddle/envelope';
import { DomainTag, toHex, utf8 } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AllowListPolicy } from './controller-policy.js';
import { createRequest, signRequest } from './create-request.js';
import { CTL_METHODS, type CtlMethod, mutates } from './methods.js';
import { NonceGuard } from './nonce-guard.js';
import { isRefusalCode, Refusal } from './refusal.js';
import { CtlRequestSchema } from './request.js';
import { okOutcome } from './response.js';
import { RESPONSE_ERROR_CODES, ResponseError } from './response-error.js';
import { claimedRequest, signResponse } from './sign-response.js';
import {
  CONTROLLER_ID,
  controller,
  DECISION,
  HOST_ID,
  host,
  hostOptions,
  makeSigned,
  signRaw,
  T0,
} from './test-fixtures.js';
import { verifyRequest } from './verify-request.js';
import { verifyResponse } from './verify-response.js';

const RUNS = { numRuns: 300 };

/** Integer-only JSON values without lone surrogates (what canonical JSON can carry). */
const jsonValue: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    fc.string({ unit: 'binary' }),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: 'binary' }), tie('value'), { maxKeys: 5 }),
  ),
})).value;
const body = fc.dictionary(fc.string({ unit: 'binary' }), jsonValue, { maxKeys: 6 });

/** Runs verifyRequest and requires either acceptance or a Refusal with a known code. */
function refusalCode(signed: unknown, options = hostOptions()): string | 'accepted' {
  try {
    verifyRequest(signed, options);
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(Refusal);
    const r = err as Refusal;
    expect(isRefusalCode(r.code)).toBe(true);
    expect(r.authenticated).toBe(false);
    expect(r.reason.length).toBeGreaterThan(0);
    return r.code;
  }
}

describe('verifyRequest never crashes', () => {
  it('on any value at all', () => {
    fc.assert(
      fc.property(fc.anything(), (junk) => {
        expect(refusalCode(junk)).not.toBe('accepted');
      }),
      RUNS,
    );
  });

  it('on envelopes of random strings', () => {
    const hexish = fc.oneof(
      fc.string(),
      fc.stringMatching(/^[0-9a-f]{64}$/),
      fc.stringMatching(/^[0-9a-f]{128}$/),
    );
    fc.assert(
      fc.property(fc.record({ payload: fc.string(), public_key: hexish, signature: hexish }), (junk) => {
        expect(refusalCode(junk)).not.toBe('accepted');
      }),
      RUNS,
    );
  });

  it('on validly signed junk payloads (reaching the parser and the schema)', () => {
    const payload = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.json(),
      jsonValue.map((v) => JSON.stringify(v)),
      fc
        .record(
          {
            version: fc.oneof(fc.constant(1), fc.integer()),
            method: fc.oneof(fc.constantFrom(...CTL_METHODS), fc.string()),
            requester: fc.oneof(fc.constant(CONTROLLER_ID), fc.string()),
            target: fc.oneof(fc.constant(HOST_ID), fc.constant('*'), fc.string()),
            nonce: fc.oneof(fc.stringMatching(/^[0-9a-f]{32}$/), fc.string()),
            issued_at_ms: fc.oneof(fc.integer({ min: T0 - 400_000, max: T0 + 400_000 }), fc.integer()),
            expires_at_ms: fc.oneof(fc.integer({ min: T0 - 400_000, max: T0 + 400_000 }), fc.integer()),
            decision_id: fc.oneof(fc.constant(DECISION), fc.string()),
            body: jsonValue,
          },
          { requiredKeys: [] },
        )
        .map((r) => JSON.stringify(r)),
    );
    fc.assert(
      fc.property(payload, (text) => {
        // Whatever it says, it must be refused or be a fully valid request.
        const code = refusalCode(signRaw(text));
        if (code === 'accepted') expect(CtlRequestSchema.safeParse(JSON.parse(text)).success).toBe(true);
      }),
      RUNS,
    );
  });

  it('on a valid envelope with one field replaced or mutated', () => {
    const { signed } = makeSigned();
    const field = fc.constantFrom('payload', 'public_key', 'signature');
    const replacement = fc.oneof(fc.string(), fc.anything());
    fc.assert(
      fc.property(field, replacement, (f, v) => {
        fc.pre(v !== (signed as unknown as Record<string, unknown>)[f]);
        expect(refusalCode({ ...signed, [f]: v })).not.toBe('accepted');
      }),
      RUNS,
    );
  });
});

describe('round trip', () => {
  it('create -> sign -> verify returns the same request for any body and method', () => {
    fc.assert(
      fc.property(
        body,
        fc.constantFrom(...CTL_METHODS),
        fc.integer({ min: 1, max: 300_000 }),
        (b, method, ttlMs) => {
          const m = method as CtlMethod;
          const request = createRequest({
            method: m,
            requester: CONTROLLER_ID,
            target: HOST_ID,
            body: b,
            now: T0,
            ttlMs,
            ...(mutates(m) ? { decisionId: DECISION } : {}),
          });
          const v = verifyRequest(signRequest(request, controller), hostOptions({ expectedMethod: m }));
          expect(v.request).toEqual(request);
          expect(CtlRequestSchema.safeParse(v.request).success).toBe(true);
        },
      ),
      RUNS,
    );
  });

  it('sign -> verify of a response returns the same result', () => {
    const { request } = makeSigned();
    fc.assert(
      fc.property(jsonValue, (result) => {
        const v = verifyResponse(signResponse(request, okOutcome(result), host), { request });
        expect(v.response.outcome).toEqual({ status: 'ok', result });
      }),
      RUNS,
    );
  });
});

describe('tampering', () => {
  const flipByte = (text: string, index: number, xor: number): string => {
    const bytes = utf8(text);
    const i = index % bytes.length;
    bytes[i] = (bytes[i] as number) ^ xor;
    return new TextDecoder().decode(bytes); // invalid UTF-8 becomes U+FFFD: still a change
  };

  it('any single-byte mutation of a signed request payload is refused as signature', () => {
    fc.assert(
      fc.property(body, fc.nat(), fc.integer({ min: 1, max: 255 }), (b, index, xor) => {
        const { signed } = makeSigned({ body: b });
        const payload = flipByte(signed.payload, index, xor);
        expect(refusalCode({ ...signed, payload })).toBe('signature');
      }),
      RUNS,
    );
  });

  it('any single-character change of the key or signature is refused as signature', () => {
    const { signed } = makeSigned();
    fc.assert(
      fc.property(
        fc.constantFrom('public_key', 'signature'),
        fc.nat(),
        fc.constantFrom(...'0123456789abcdef'),
        (f, i, c) => {
          const value = signed[f as 'public_key' | 'signature'];
          const at = i % value.length;
          fc.pre(value[at] !== c);
          const changed = value.slice(0, at) + c + value.slice(at + 1);
          expect(refusalCode({ ...signed, [f]: changed })).toBe('signature');
        },
      ),
      RUNS,
    );
  });

  it('any single-byte mutation of a signed response is refused', () => {
    const { request } = makeSigned();
    const s = signResponse(request, okOutcome({ instance_id: 'abc', n: 1 }), host);
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 255 }), (index, xor) => {
        const payload = flipByte(s.payload, index, xor);
        try {
          verifyResponse({ ...s, payload }, { request, expectedPublicKey: host.publicKey });
          expect.unreachable();
        } catch (err) {
          expect(err).toBeInstanceOf(ResponseError);
          expect((err as ResponseError).code).toBe('signature');
        }
      }),
      RUNS,
    );
  });

  it('verifyResponse never crashes on junk', () => {
    const { request } = makeSigned();
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.string().map((p) => signRaw(p, host, DomainTag.ctlResponse)),
        ),
        (junk) => {
          try {
            verifyResponse(junk, { request });
            expect.unreachable();
          } catch (err) {
            expect(err).toBeInstanceOf(ResponseError);
            expect(RESPONSE_ERROR_CODES).toContain((err as ResponseError).code);
          }
        },
      ),
      RUNS,
    );
  });

  it('claimedRequest never throws and always yields a signable binding', () => {
    fc.assert(
      fc.property(fc.anything(), fc.option(fc.string()), (junk, header) => {
        const claim = claimedRequest(junk, header ?? undefined);
        expect(() => signResponse(claim, okOutcome(null), host)).not.toThrow();
      }),
      RUNS,
    );
  });
});

describe('replay protection holds under random schedules', () => {
  it('no request is accepted twice while the host clock never steps back more than the skew', () => {
    const requests = Array.from(
      { length: 8 },
      (_, i) => makeSigned({ now: T0 + i * 1000, ttlMs: 20_000 }).signed,
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(7), fc.integer({ min: -30_000, max: 20_000 })), { maxLength: 60 }),
        (deliveries) => {
          const nonces = new NonceGuard({ capacity: 4 });
          const options = { policy: new AllowListPolicy({ nodeIds: [CONTROLLER_ID] }), nonces };
          const accepted = new Set<number>();
          let now = T0;
          let latest = T0;
          for (const [which, step] of deliveries) {
            now = Math.max(now + step, latest - 30_000);
            latest = Math.max(latest, now);
            const code = refusalCode(requests[which], hostOptions({ ...options, now }));
            if (code === 'accepted') {
              expect(accepted.has(which)).toBe(false);
              accepted.add(which);
            }
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

it('keys used by the property tests are the fixtures', () => {
  expect(toHex(controller.publicKey)).not.toBe(toHex(host.publicKey));
});
