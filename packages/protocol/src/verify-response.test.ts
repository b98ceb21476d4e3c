import { DomainTag, nodeIdFromPublicKey, signWithDomain, toHex, utf8 } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { CallFailure, lostCallKind, refusalKind } from './call-failure.js';
import { MAX_REASON_LENGTH } from './limits.js';
import { ProtocolError } from './protocol-error.js';
import { Refusal } from './refusal.js';
import { okOutcome, refusedOutcome } from './response.js';
import { ResponseError, type ResponseErrorCode } from './response-error.js';
import { boundReason, claimedRequest, signResponse } from './sign-response.js';
import { HOST_ID, host, makeSigned, signRaw, stranger, T0 } from './test-fixtures.js';
import { verifyResponse } from './verify-response.js';

const { request, signed: signedRequest } = makeSigned({
  method: 'workload.place',
  decisionId: 'ab'.repeat(32),
});

function codeOf(fn: () => unknown): ResponseErrorCode {
  try {
    fn();
  } catch (err) {
    if (err instanceof ResponseError) return err.code;
    throw err;
  }
  throw new Error('expected a ResponseError');
}

function responseRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    method: request.method,
    responder: HOST_ID,
    request_nonce: request.nonce,
    outcome: { status: 'ok', result: null },
    ...overrides,
  };
}
const signResponseRaw = (payload: string, keys = host) => signRaw(payload, keys, DomainTag.ctlResponse);
const signResponseObject = (o: Record<string, unknown>, keys = host) =>
  signResponseRaw(JSON.stringify(o), keys);

describe('signResponse and verifyResponse', () => {
  it('round-trips an ok outcome and returns the responder key', () => {
    const s = signResponse(request, okOutcome({ instance_id: 'i-1' }), host);
    const v = verifyResponse(s, { request, expectedPublicKey: host.publicKey });
    expect(v.response).toEqual({
      version: 1,
      method: 'workload.place',
      responder: HOST_ID,
      request_nonce: request.nonce,
      outcome: { status: 'ok', result: { instance_id: 'i-1' } },
    });
    expect(toHex(v.publicKey)).toBe(toHex(host.publicKey));
    expect(s.payload).toContain('"outcome":{"result":{"instance_id":"i-1"},"status":"ok"}');
  });

  it('round-trips a refusal (from a Refusal or an outcome)', () => {
    const a = signResponse(
      request,
      new Refusal('admission', 'no wasi adapter', { authenticated: true }),
      host,
    );
    const b = signResponse(request, refusedOutcome('admission', 'no wasi adapter', true), host);
    expect(a.payload).toBe(b.payload);
    expect(verifyResponse(a, { request }).response.outcome).toEqual({
      status: 'refused',
      code: 'admission',
      reason: 'no wasi adapter',
      authenticated: true,
    });
  });

  it('accepts a response without an expected key (first use)', () => {
    const s = signResponse(request, okOutcome(null), stranger);
    expect(toHex(verifyResponse(s, { request }).publicKey)).toBe(toHex(stranger.publicKey));
  });

  it('bounds and cleans reasons', () => {
    const long = 'x'.repeat(MAX_REASON_LENGTH + 10);
    expect(boundReason(long)).toBe(`${'x'.repeat(MAX_REASON_LENGTH - 3)}\u2026`);
    expect(utf8(boundReason(long)).length).toBe(MAX_REASON_LENGTH);
    expect(boundReason('bad \ud800 text')).toBe('bad \ufffd text');
    const s = signResponse(request, refusedOutcome('runtime', long, true), host);
    expect(() => verifyResponse(s, { request })).not.toThrow();
  });

  it('counts the reason limit in UTF-8 bytes, not characters', () => {
    // 3,000 characters, 6,000 bytes: within a character count of 4,096, above the byte limit.
    const wide = '\u00e9'.repeat(3000);
    const cut = boundReason(wide);
    expect(utf8(cut).length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
    expect(cut.endsWith('\u2026')).toBe(true);
    expect(boundReason('\u{1F600}'.repeat(2000)).isWellFormed()).toBe(true); // never splits a pair
    // A host that sends 6,000 bytes of reason (signed as is) is refused by the controller.
    const payload = JSON.stringify({
      method: request.method,
      outcome: { authenticated: true, code: 'runtime', reason: wide, status: 'refused' },
      request_nonce: request.nonce,
      responder: nodeIdFromPublicKey(host.publicKey),
      version: 1,
    });
    const raw = {
      payload,
      public_key: toHex(host.publicKey),
      signature: toHex(signWithDomain(DomainTag.ctlResponse, host.secretKey, utf8(payload))),
    };
    expect(() => verifyResponse(raw, { request })).toThrow(
      expect.objectContaining({ code: 'invalid_response' }),
    );
  });

  it('refuses to sign a response with a malformed method or nonce', () => {
    expect(() => signResponse({ method: 'a b', nonce: '' }, okOutcome(null), host)).toThrow(ProtocolError);
    expect(() => signResponse({ method: 'x', nonce: 'zz' }, okOutcome(null), host)).toThrow(ProtocolError);
  });
});

describe('verifyResponse refusals', () => {
  it('invalid_response: malformed envelope, oversized, not JSON, schema, version', () => {
    expect(codeOf(() => verifyResponse('x', { request }))).toBe('invalid_response');
    expect(codeOf(() => verifyResponse(signResponseRaw('x'.repeat(300_000)), { request }))).toBe(
      'invalid_response',
    );
    expect(codeOf(() => verifyResponse(signResponseRaw('{"a":1,"a":2}'), { request }))).toBe(
      'invalid_response',
    );
    const unknownCode = responseRecord({ outcome: { status: 'refused', code: 'weird', reason: '' } });
    expect(codeOf(() => verifyResponse(signResponseObject(unknownCode), { request }))).toBe(
      'invalid_response',
    );
    const extra = responseRecord({ extra: 1 });
    expect(codeOf(() => verifyResponse(signResponseObject(extra), { request }))).toBe('invalid_response');
    const v2 = responseRecord({ version: 2 });
    expect(() => verifyResponse(signResponseObject(v2), { request })).toThrow(
      'unsupported response version 2',
    );
  });

  it('signature: bad hex, forged signature, request domain tag', () => {
    const s = signResponse(request, okOutcome(null), host);
    expect(codeOf(() => verifyResponse({ ...s, signature: 'zz' }, { request }))).toBe('signature');
    expect(codeOf(() => verifyResponse({ ...s, signature: '00'.repeat(64) }, { request }))).toBe('signature');
    const asRequest = signRaw(s.payload, host, DomainTag.ctlRequest);
    expect(codeOf(() => verifyResponse(asRequest, { request }))).toBe('signature');
    // A request signature never passes as a response.
    expect(codeOf(() => verifyResponse(signedRequest, { request }))).toBe('signature');
  });

  it('key_mismatch: signed by another key than the one expected', () => {
    const s = signResponse(request, okOutcome(null), stranger);
    expect(codeOf(() => verifyResponse(s, { request, expectedPublicKey: host.publicKey }))).toBe(
      'key_mismatch',
    );
  });

  it('responder_mismatch: responder is not the id of the signing key', () => {
    const s = signResponseObject(responseRecord({ responder: nodeIdFromPublicKey(stranger.publicKey) }));
    expect(codeOf(() => verifyResponse(s, { request }))).toBe('responder_mismatch');
  });

  it('nonce_mismatch and method_mismatch', () => {
    const other = makeSigned({ method: 'workload.place', decisionId: 'ab'.repeat(32) }).request;
    const s = signResponse(other, okOutcome(null), host);
    expect(codeOf(() => verifyResponse(s, { request }))).toBe('nonce_mismatch');
    const m = signResponse({ method: 'workload.load', nonce: request.nonce }, okOutcome(null), host);
    expect(codeOf(() => verifyResponse(m, { request }))).toBe('method_mismatch');
  });

  it('expired: an answer after the request expiry plus skew, when now is given', () => {
    const s = signResponse(request, okOutcome(null), host);
    expect(() => verifyResponse(s, { request, now: request.expires_at_ms + 30_000 })).not.toThrow();
    expect(codeOf(() => verifyResponse(s, { request, now: request.expires_at_ms + 30_001 }))).toBe('expired');
    expect(() => verifyResponse(s, { request, now: T0 })).not.toThrow();
  });
});

describe('refusing an unverifiable request', () => {
  it('binds the refusal to the claimed nonce and the transport method', () => {
    const forged = { ...signedRequest, signature: '00'.repeat(64) };
    const claim = claimedRequest(forged, 'workload.place');
    expect(claim).toEqual({ method: 'workload.place', nonce: request.nonce });
    const s = signResponse(claim, new Refusal('signature', 'bad'), host);
    const outcome = verifyResponse(s, { request }).response.outcome;
    expect(outcome).toMatchObject({ status: 'refused', code: 'signature', authenticated: false });
    // A mutating call refused unauthenticated may have been executed from another copy.
    if (outcome.status === 'refused') expect(refusalKind(request.method, outcome)).toBe('indeterminate');
  });

  it('claims nothing from junk', () => {
    expect(claimedRequest(null)).toEqual({ method: '', nonce: '' });
    expect(claimedRequest({ payload: '{"method":"a b","nonce":"x"}' }, 'bad method')).toEqual({
      method: '',
      nonce: '',
    });
    expect(claimedRequest({ payload: '{"method":"m","nonce":5}', public_key: 'x', signature: 'y' })).toEqual({
      method: 'm',
      nonce: '',
    });
    const s = signResponse(claimedRequest('junk'), new Refusal('invalid_request', 'junk'), host);
    expect(codeOf(() => verifyResponse(s, { request }))).toBe('nonce_mismatch');
  });
});

describe('call failures', () => {
  it('a lost answer is indeterminate only for a sent mutating call', () => {
    expect(lostCallKind('workload.place', true)).toBe('indeterminate');
    expect(lostCallKind('workload.place', false)).toBe('unreachable');
    expect(lostCallKind('workload.status', true)).toBe('unreachable');
    const f = CallFailure.refused(refusedOutcome('governance', 'denied', true));
    expect([f.code, f.refusal?.code, f.message]).toEqual([
      'refused',
      'governance',
      'refused: governance: denied',
    ]);
  });
});
