import { nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { AllowListPolicy } from './controller-policy.js';
import { MAX_MESSAGE_BYTES } from './limits.js';
import { NonceGuard } from './nonce-guard.js';
import { Refusal } from './refusal.js';
import {
  CONTROLLER_ID,
  codeOf,
  controller,
  HOST_ID,
  hostOptions,
  makeSigned,
  refusalOf,
  requestRecord,
  STRANGER_ID,
  signObject,
  signRaw,
  stranger,
  T0,
} from './test-fixtures.js';
import { verifyRequest } from './verify-request.js';

describe('verifyRequest: the order holds', () => {
  const expired = { now: T0 + 400_000 };
  it('expired and forged: signature', () => {
    const { signed } = makeSigned();
    const forged = { ...signed, signature: '00'.repeat(64) };
    expect(codeOf(() => verifyRequest(forged, hostOptions(expired)))).toBe('signature');
  });

  it('oversized and forged: invalid_request (size before signature)', () => {
    const payload = 'x'.repeat(MAX_MESSAGE_BYTES + 1);
    const forged = { payload, public_key: toHex(controller.publicKey), signature: '00'.repeat(64) };
    expect(codeOf(() => verifyRequest(forged, hostOptions()))).toBe('invalid_request');
  });

  it('bad JSON from an unauthorised, expired signer: invalid_request (schema before the rest)', () => {
    const bad = signRaw('{"nope":', stranger);
    expect(codeOf(() => verifyRequest(bad, hostOptions(expired)))).toBe('invalid_request');
  });

  it('unknown method to another node: unknown_method (method before target)', () => {
    const s = signObject(requestRecord({ method: 'workload.fly', target: STRANGER_ID }));
    expect(codeOf(() => verifyRequest(s, hostOptions()))).toBe('unknown_method');
  });

  it('requester mismatch, wrong target and expired: signature (requester before target)', () => {
    const s = signObject(requestRecord({ target: STRANGER_ID }), stranger);
    expect(codeOf(() => verifyRequest(s, hostOptions(expired)))).toBe('signature');
  });

  it('wrong target and expired: not_for_me (target before time)', () => {
    const { signed } = makeSigned({ target: STRANGER_ID });
    expect(codeOf(() => verifyRequest(signed, hostOptions(expired)))).toBe('not_for_me');
  });

  it('expired, bad nonce and unauthorised: expired (time before nonce and policy)', () => {
    const s = signObject(requestRecord({ nonce: 'x' }));
    expect(codeOf(() => verifyRequest(s, hostOptions({ ...expired, policy: new AllowListPolicy() })))).toBe(
      'expired',
    );
  });

  it('bad nonce and unauthorised: invalid_request (nonce format before policy)', () => {
    const s = signObject(requestRecord({ nonce: 'x' }));
    expect(codeOf(() => verifyRequest(s, hostOptions({ policy: new AllowListPolicy() })))).toBe(
      'invalid_request',
    );
  });

  it('unauthorised replay: unauthorized (policy before nonce memory)', () => {
    const { signed } = makeSigned();
    const nonces = new NonceGuard();
    verifyRequest(signed, hostOptions({ nonces }));
    expect(codeOf(() => verifyRequest(signed, hostOptions({ nonces, policy: new AllowListPolicy() })))).toBe(
      'unauthorized',
    );
  });

  it('no refusal before the last step records the nonce', () => {
    const nonces = new NonceGuard();
    const nonce = 'a0'.repeat(16);
    const attempts = [
      () =>
        verifyRequest(
          { ...signObject(requestRecord()), signature: '00'.repeat(64) },
          hostOptions({ nonces }),
        ),
      () => verifyRequest(signObject(requestRecord({ target: STRANGER_ID })), hostOptions({ nonces })),
      () => verifyRequest(signObject(requestRecord()), hostOptions({ nonces, ...expired })),
      () =>
        verifyRequest(signObject(requestRecord()), hostOptions({ nonces, policy: new AllowListPolicy() })),
      () =>
        verifyRequest(signObject(requestRecord()), hostOptions({ nonces, expectedMethod: 'workload.logs' })),
    ];
    for (const attempt of attempts) expect(() => attempt()).toThrow(Refusal);
    expect(nonces.has(nonce)).toBe(false);
    expect(() => verifyRequest(signObject(requestRecord()), hostOptions({ nonces }))).not.toThrow();
  });
});

describe('verifyRequest: refusals', () => {
  it('are all unauthenticated, with distinct reasons per check', () => {
    const { signed } = makeSigned();
    const replayOptions = hostOptions();
    verifyRequest(signed, replayOptions);
    const refusals = [
      refusalOf(() => verifyRequest(null, hostOptions())),
      refusalOf(() => verifyRequest({ ...signed, public_key: 'x' }, hostOptions())),
      refusalOf(() => verifyRequest({ ...signed, signature: 'x' }, hostOptions())),
      refusalOf(() => verifyRequest({ ...signed, signature: '00'.repeat(64) }, hostOptions())),
      refusalOf(() => verifyRequest(signRaw('{'), hostOptions())),
      refusalOf(() => verifyRequest(signObject(requestRecord({ version: 3 })), hostOptions())),
      refusalOf(() => verifyRequest(signObject(requestRecord({ method: 'x' })), hostOptions())),
      refusalOf(() => verifyRequest(signed, hostOptions({ expectedMethod: 'workload.logs' }))),
      refusalOf(() => verifyRequest(signObject(requestRecord({ method: 'workload.stop' })), hostOptions())),
      refusalOf(() => verifyRequest(signObject(requestRecord(), stranger), hostOptions())),
      refusalOf(() => verifyRequest(signObject(requestRecord({ target: STRANGER_ID })), hostOptions())),
      refusalOf(() => verifyRequest(signObject(requestRecord({ target: '*' })), hostOptions())),
      refusalOf(() => verifyRequest(signed, hostOptions({ now: T0 + 10_000_000 }))),
      refusalOf(() => verifyRequest(signed, hostOptions({ now: T0 - 10_000_000 }))),
      refusalOf(() =>
        verifyRequest(signObject(requestRecord({ expires_at_ms: T0 + 999_999 })), hostOptions()),
      ),
      refusalOf(() =>
        verifyRequest(
          signObject(requestRecord({ issued_at_ms: T0 + 10, expires_at_ms: T0 + 5 })),
          hostOptions(),
        ),
      ),
      refusalOf(() => verifyRequest(signObject(requestRecord({ nonce: 'x' })), hostOptions())),
      refusalOf(() => verifyRequest(signed, hostOptions({ policy: new AllowListPolicy() }))),
      refusalOf(() => verifyRequest(signed, replayOptions)),
    ];
    const templates = refusals.map((r) => r.reason.replace(/[0-9a-f]{32,}|\d+/g, '#'));
    expect(new Set(templates).size).toBe(templates.length);
    for (const r of refusals) {
      expect(r.authenticated).toBe(false);
      expect(r.message).toBe(`${r.code}: ${r.reason}`);
    }
    expect(new Set(refusals.map((r) => r.code))).toEqual(
      new Set([
        'invalid_request',
        'signature',
        'unknown_method',
        'not_for_me',
        'expired',
        'unauthorized',
        'replay',
      ]),
    );
  });

  it('uses the node id derived from the key, not a claimed one', () => {
    expect(nodeIdFromPublicKey(controller.publicKey)).toBe(CONTROLLER_ID);
    expect(HOST_ID).not.toBe(CONTROLLER_ID);
  });
});
