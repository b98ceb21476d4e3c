import { canonicalJson, DomainTag, fromHex, HeddleError, utf8, verifyWithDomain } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { createRequest, signRequest } from './create-request.js';
import { ProtocolError } from './protocol-error.js';
import { CtlRequestSchema } from './request.js';
import { CONTROLLER_ID, controller, DECISION, HOST_ID, stranger, T0 } from './test-fixtures.js';

const base = { method: 'workload.status', requester: CONTROLLER_ID, target: HOST_ID, now: T0 } as const;

// A ProtocolError for a malformed request; an EnvelopeError (canonical_json) from the serialiser.
function errorOf(fn: () => unknown): HeddleError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProtocolError || err instanceof HeddleError) return err;
    throw err;
  }
  throw new Error('expected a ProtocolError or an EnvelopeError');
}

describe('createRequest', () => {
  it('builds a version 1 request with the default 290 s lifetime and a random nonce', () => {
    const r = createRequest(base);
    expect(r).toMatchObject({
      version: 1,
      method: 'workload.status',
      issued_at_ms: T0,
      expires_at_ms: T0 + 290_000,
    });
    expect(r.body).toEqual({});
    expect(r.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(createRequest(base).nonce).not.toBe(r.nonce);
    expect('decision_id' in r).toBe(false);
    expect(CtlRequestSchema.safeParse(r).success).toBe(true);
  });

  it('gives every request its own nonce, across many refills of the random pool', () => {
    const nonces = Array.from({ length: 2000 }, () => createRequest(base).nonce);
    for (const n of nonces) expect(n).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(nonces).size).toBe(nonces.length);
    expect(nonces).not.toContain('0'.repeat(32)); // used bytes are zeroed, never handed out again
  });

  it('takes a ttl from 1 ms to 300 s and refuses more', () => {
    expect(createRequest({ ...base, ttlMs: 300_000 }).expires_at_ms).toBe(T0 + 300_000);
    expect(createRequest({ ...base, ttlMs: 1 }).expires_at_ms).toBe(T0 + 1);
    for (const ttlMs of [300_001, 0, -5, 1.5]) {
      const e = errorOf(() => createRequest({ ...base, ttlMs }));
      expect([e.code, e.field]).toEqual(['invalid_request', 'expires_at_ms']);
    }
  });

  it('carries the decision id of a mutating request and refuses one without', () => {
    expect(createRequest({ ...base, method: 'workload.place', decisionId: DECISION }).decision_id).toBe(
      DECISION,
    );
    const e = errorOf(() => createRequest({ ...base, method: 'workload.place' }));
    expect([e.code, e.field]).toEqual(['invalid_request', 'decision_id']);
    expect(errorOf(() => createRequest({ ...base, decisionId: 'ABC' })).field).toBe('decision_id');
  });

  it('refuses malformed fields, naming them', () => {
    // @ts-expect-error: not a method
    expect(errorOf(() => createRequest({ ...base, method: 'workload.fly' })).code).toBe('unknown_method');
    expect(errorOf(() => createRequest({ ...base, requester: 'me' })).field).toBe('requester');
    expect(errorOf(() => createRequest({ ...base, target: 'you' })).field).toBe('target');
    expect(errorOf(() => createRequest({ ...base, target: '*' })).field).toBe('target');
    expect(errorOf(() => createRequest({ ...base, now: -1 })).field).toBe('issued_at_ms');
    // @ts-expect-error: not an object
    expect(errorOf(() => createRequest({ ...base, body: [1] })).field).toBe('body');
    expect(createRequest({ ...base, method: 'workload.describe', target: '*' }).target).toBe('*');
  });
});

describe('signRequest', () => {
  it('signs the canonical JSON of the request under the request domain tag', () => {
    const r = createRequest({ ...base, body: { z: 1, a: ['x', { b: null }] } });
    const s = signRequest(r, controller);
    expect(s.payload).toBe(canonicalJson(r));
    expect(s.payload.startsWith('{"body":{"a":["x",{"b":null}],"z":1},"expires_at_ms":')).toBe(true);
    const ok = verifyWithDomain(
      DomainTag.ctlRequest,
      fromHex(s.public_key, 32),
      utf8(s.payload),
      fromHex(s.signature, 64),
    );
    expect(ok).toBe(true);
    expect(
      verifyWithDomain(
        DomainTag.ctlResponse,
        fromHex(s.public_key, 32),
        utf8(s.payload),
        fromHex(s.signature, 64),
      ),
    ).toBe(false);
  });

  it('refuses to sign with a key that is not the requester', () => {
    const e = errorOf(() => signRequest(createRequest(base), stranger));
    expect([e.code, e.field]).toEqual(['invalid_request', 'requester']);
  });

  it('refuses a hand-built request that breaks the schema', () => {
    const r = { ...createRequest(base), nonce: 'short' };
    expect(errorOf(() => signRequest(r, controller)).field).toBe('nonce');
    const late = { ...createRequest(base), expires_at_ms: T0 + 400_000 };
    expect(errorOf(() => signRequest(late, controller)).field).toBe('expires_at_ms');
  });

  it('refuses a body that cannot be canonicalised or is too large', () => {
    expect(errorOf(() => signRequest(createRequest({ ...base, body: { x: 0.5 } }), controller)).code).toBe(
      'canonical_json',
    );
    const big = createRequest({ ...base, body: { pad: 'x'.repeat(256 * 1024) } });
    expect(errorOf(() => signRequest(big, controller)).code).toBe('canonical_json');
  });
});
