import { DomainTag, GROUP_ORDER, signWithDomain, toHex, utf8 } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { AllowListPolicy, type ControllerPolicy } from './controller-policy.js';
import { MAX_MESSAGE_BYTES } from './limits.js';
import { NonceGuard } from './nonce-guard.js';
import {
  CONTROLLER_ID,
  codeOf,
  controller,
  DECISION,
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

describe('verifyRequest: acceptance', () => {
  it('accepts a valid request, returns it with the signer key and records the nonce', () => {
    const { request, signed } = makeSigned({ body: { instance_id: 'abc', n: 3 } });
    const options = hostOptions();
    const v = verifyRequest(signed, options);
    expect(v.request).toEqual(request);
    expect(toHex(v.publicKey)).toBe(toHex(controller.publicKey));
    expect(v.signed.payload).toBe(signed.payload);
    expect(options.nonces.has(request.nonce)).toBe(true);
  });

  it('accepts a mutating request that carries a decision id', () => {
    const { signed } = makeSigned({ method: 'workload.place', decisionId: DECISION });
    expect(verifyRequest(signed, hostOptions()).request.decision_id).toBe(DECISION);
  });

  it('accepts "*" with describe', () => {
    const { signed } = makeSigned({ method: 'workload.describe', target: '*' });
    expect(verifyRequest(signed, hostOptions()).request.target).toBe('*');
  });

  it('accepts when the transport method equals the signed method', () => {
    const { signed } = makeSigned();
    expect(() => verifyRequest(signed, hostOptions({ expectedMethod: 'workload.status' }))).not.toThrow();
  });

  it('throws a TypeError (not a Refusal) for malformed options', () => {
    const { signed } = makeSigned();
    expect(() => verifyRequest(signed, hostOptions({ nodeId: 'nope' }))).toThrow(TypeError);
    expect(() => verifyRequest(signed, hostOptions({ now: 1.5 }))).toThrow(TypeError);
  });
});

describe('verifyRequest: 1. size and decoding', () => {
  it.each([
    ['a string', 'hello'],
    ['null', null],
    ['an array', []],
  ])('refuses %s as invalid_request', (_name, value) => {
    expect(codeOf(() => verifyRequest(value, hostOptions()))).toBe('invalid_request');
  });

  it('refuses an unknown envelope field', () => {
    const { signed } = makeSigned();
    const r = refusalOf(() => verifyRequest({ ...signed, extra: 1 }, hostOptions()));
    expect([r.code, r.field]).toEqual(['invalid_request', 'extra']);
  });

  it('refuses a payload that is not a string', () => {
    const { signed } = makeSigned();
    const r = refusalOf(() => verifyRequest({ ...signed, payload: 5 }, hostOptions()));
    expect([r.code, r.field]).toEqual(['invalid_request', 'payload']);
  });

  it('refuses an oversized message even when it is validly signed', () => {
    // signRequest refuses to produce such a payload, so sign the text directly.
    const payload = JSON.stringify(requestRecord({ body: { pad: 'x'.repeat(MAX_MESSAGE_BYTES) } }));
    const r = refusalOf(() => verifyRequest(signRaw(payload), hostOptions()));
    expect(r.code).toBe('invalid_request');
    expect(r.reason).toContain(`exceeds ${MAX_MESSAGE_BYTES} bytes`);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const pad = '\u00e9'.repeat(MAX_MESSAGE_BYTES / 2); // 2 bytes each: over the limit with the rest
    const r = refusalOf(() =>
      verifyRequest(signRaw(JSON.stringify(requestRecord({ body: { pad } }))), hostOptions()),
    );
    expect(r.reason).toContain('exceeds');
  });

  it('refuses a payload with a lone surrogate', () => {
    const { signed } = makeSigned();
    const r = refusalOf(() =>
      verifyRequest({ ...signed, payload: `${signed.payload}\ud800` }, hostOptions()),
    );
    expect(r.code).toBe('invalid_request');
    expect(r.reason).toContain('lone surrogate');
  });

  it.each([
    ['upper-case', (k: string) => k.toUpperCase()],
    ['short', (k: string) => k.slice(2)],
    ['non-hex', (k: string) => `zz${k.slice(2)}`],
  ])('refuses a %s public_key as signature', (_n, f) => {
    const { signed } = makeSigned();
    const r = refusalOf(() => verifyRequest({ ...signed, public_key: f(signed.public_key) }, hostOptions()));
    expect([r.code, r.field]).toEqual(['signature', 'public_key']);
  });

  it('refuses a signature of the wrong length as signature', () => {
    const { signed } = makeSigned();
    const r = refusalOf(() =>
      verifyRequest({ ...signed, signature: signed.signature.slice(2) }, hostOptions()),
    );
    expect([r.code, r.field]).toEqual(['signature', 'signature']);
  });
});

describe('verifyRequest: 2. signature', () => {
  it('refuses a forged signature', () => {
    const { signed } = makeSigned();
    const sig = (signed.signature[0] === '0' ? '1' : '0') + signed.signature.slice(1);
    const r = refusalOf(() => verifyRequest({ ...signed, signature: sig }, hostOptions()));
    expect(r.code).toBe('signature');
    expect(r.reason).toContain('does not verify');
  });

  it('refuses swapped keys: payload signed by A, public_key of B', () => {
    const { signed } = makeSigned();
    const swapped = { ...signed, public_key: toHex(stranger.publicKey) };
    expect(codeOf(() => verifyRequest(swapped, hostOptions()))).toBe('signature');
  });

  it('refuses a signature under another domain tag (a response signature)', () => {
    const { signed } = makeSigned();
    const sig = signWithDomain(DomainTag.ctlResponse, controller.secretKey, utf8(signed.payload));
    expect(codeOf(() => verifyRequest({ ...signed, signature: toHex(sig) }, hostOptions()))).toBe(
      'signature',
    );
  });

  it('refuses a malleated signature (S + L, non-canonical)', () => {
    const { signed } = makeSigned();
    const bytes = Buffer.from(signed.signature, 'hex');
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(bytes[i] as number);
    s += GROUP_ORDER;
    for (let i = 32; i < 64; i++) {
      bytes[i] = Number(s & 0xffn);
      s >>= 8n;
    }
    expect(codeOf(() => verifyRequest({ ...signed, signature: bytes.toString('hex') }, hostOptions()))).toBe(
      'signature',
    );
  });
});

describe('verifyRequest: 3. JSON, schema, version, method', () => {
  const cases: Array<[string, string, string]> = [
    ['not JSON', 'not json', 'payload is not strict JSON'],
    ['duplicate keys', '{"version":1,"version":1}', 'duplicate key'],
    ['a float', JSON.stringify(requestRecord({ issued_at_ms: 1.5 })), 'integers'],
    ['an array', '[]', 'request field $'],
    ['an unknown field', JSON.stringify(requestRecord({ extra: true })), 'extra'],
    ['a missing field', JSON.stringify(requestRecord({ nonce: undefined })), 'request field nonce'],
    ['a body that is not an object', JSON.stringify(requestRecord({ body: [1] })), 'request field body'],
    [
      'a malformed decision id',
      JSON.stringify(requestRecord({ decision_id: 'AB' })),
      'request field decision_id',
    ],
    [
      'a negative timestamp',
      JSON.stringify(requestRecord({ issued_at_ms: -1 })),
      'request field issued_at_ms',
    ],
    ['version 2', JSON.stringify(requestRecord({ version: 2 })), 'unsupported version 2'],
  ];
  it.each(cases)('refuses %s as invalid_request', (_name, payload, reason) => {
    const r = refusalOf(() => verifyRequest(signRaw(payload), hostOptions()));
    expect(r.code).toBe('invalid_request');
    expect(r.reason).toContain(reason);
  });

  it('refuses an unknown method as unknown_method', () => {
    const r = refusalOf(() =>
      verifyRequest(signObject(requestRecord({ method: 'workload.fly' })), hostOptions()),
    );
    expect([r.code, r.field]).toEqual(['unknown_method', 'method']);
  });

  it('refuses a transport method that differs from the signed method', () => {
    const { signed } = makeSigned();
    const r = refusalOf(() => verifyRequest(signed, hostOptions({ expectedMethod: 'workload.stop' })));
    expect([r.code, r.field]).toEqual(['invalid_request', 'method']);
    expect(r.reason).toContain('transport method');
  });

  it.each([
    'workload.place',
    'workload.load',
    'workload.start',
    'workload.stop',
    'workload.unload',
    'workload.revoke',
  ])('refuses %s without a decision id', (method) => {
    const r = refusalOf(() => verifyRequest(signObject(requestRecord({ method })), hostOptions()));
    expect([r.code, r.field]).toEqual(['invalid_request', 'decision_id']);
  });
});

describe('verifyRequest: 4. requester is the signer', () => {
  it('refuses a requester that is not the node id of the signing key', () => {
    // Signed by the stranger, claiming to be the authorised controller.
    const r = refusalOf(() => verifyRequest(signObject(requestRecord(), stranger), hostOptions()));
    expect([r.code, r.field]).toEqual(['signature', 'requester']);
  });
});

describe('verifyRequest: 5. target', () => {
  it('refuses a request for another node', () => {
    const { signed } = makeSigned({ target: STRANGER_ID });
    const r = refusalOf(() => verifyRequest(signed, hostOptions()));
    expect([r.code, r.field]).toEqual(['not_for_me', 'target']);
  });

  it('refuses "*" with any method but describe', () => {
    const r = refusalOf(() => verifyRequest(signObject(requestRecord({ target: '*' })), hostOptions()));
    expect(r.code).toBe('not_for_me');
    expect(r.reason).toContain('only accepted for workload.describe');
  });
});

describe('verifyRequest: 6. time window', () => {
  it('refuses a request at its expiry instant and accepts it 1 ms before', () => {
    const { request, signed } = makeSigned({ ttlMs: 60_000 });
    expect(codeOf(() => verifyRequest(signed, hostOptions({ now: request.expires_at_ms })))).toBe('expired');
    expect(() => verifyRequest(signed, hostOptions({ now: request.expires_at_ms - 1 }))).not.toThrow();
  });

  it('tolerates a controller clock 29 s ahead (and exactly 30 s), refuses 31 s', () => {
    for (const [ahead, ok] of [
      [29_000, true],
      [30_000, true],
      [31_000, false],
    ] as const) {
      const { signed } = makeSigned({ now: T0 + ahead });
      if (ok) expect(() => verifyRequest(signed, hostOptions())).not.toThrow();
      else {
        const r = refusalOf(() => verifyRequest(signed, hostOptions()));
        expect([r.code, r.field]).toEqual(['expired', 'issued_at_ms']);
      }
    }
  });

  it('with a controller clock 30 s behind, a 60 s request lives 30 s on the host', () => {
    const { signed } = makeSigned({ now: T0 - 30_000, ttlMs: 60_000 });
    expect(() => verifyRequest(signed, hostOptions({ now: T0 + 29_999 }))).not.toThrow();
    expect(codeOf(() => verifyRequest(signed, hostOptions({ now: T0 + 30_000 })))).toBe('expired');
  });

  it('refuses a lifetime over 300 s and accepts exactly 300 s', () => {
    const long = signObject(requestRecord({ expires_at_ms: T0 + 300_001 }));
    const r = refusalOf(() => verifyRequest(long, hostOptions()));
    expect([r.code, r.field]).toEqual(['invalid_request', 'expires_at_ms']);
    expect(r.reason).toContain('exceeds the maximum 300000 ms');
    const max = signObject(requestRecord({ expires_at_ms: T0 + 300_000 }));
    expect(() => verifyRequest(max, hostOptions())).not.toThrow();
  });

  it('refuses expires_at_ms not after issued_at_ms', () => {
    const r = refusalOf(() =>
      verifyRequest(
        signObject(requestRecord({ issued_at_ms: T0 + 10, expires_at_ms: T0 + 5 })),
        hostOptions(),
      ),
    );
    expect(r.code).toBe('invalid_request');
    expect(r.reason).toContain('later than issued_at_ms');
  });
});

describe('verifyRequest: 7. nonce format', () => {
  it.each(['A0'.repeat(16), 'a0'.repeat(15), 'zz'.repeat(16), ''])('refuses nonce %j', (nonce) => {
    const r = refusalOf(() => verifyRequest(signObject(requestRecord({ nonce })), hostOptions()));
    expect([r.code, r.field]).toEqual(['invalid_request', 'nonce']);
  });
});

describe('verifyRequest: 8. authorised controller', () => {
  it('refuses an unauthorised requester without burning its nonce', () => {
    const { request, signed } = makeSigned();
    const nonces = new NonceGuard();
    const deny = hostOptions({ nonces, policy: new AllowListPolicy() });
    expect(codeOf(() => verifyRequest(signed, deny))).toBe('unauthorized');
    expect(nonces.has(request.nonce)).toBe(false);
    // Once authorised, the same signed request is still accepted.
    expect(() => verifyRequest(signed, hostOptions({ nonces }))).not.toThrow();
  });

  it('refuses a method the policy does not allow', () => {
    const policy = new AllowListPolicy({ nodeIds: [CONTROLLER_ID], methods: ['workload.describe'] });
    expect(codeOf(() => verifyRequest(makeSigned().signed, hostOptions({ policy })))).toBe('unauthorized');
  });

  it('treats a throwing policy as a refusal', () => {
    const policy: ControllerPolicy = {
      isAuthorized: () => {
        throw new Error('db down');
      },
    };
    const r = refusalOf(() => verifyRequest(makeSigned().signed, hostOptions({ policy })));
    expect(r.code).toBe('unauthorized');
    expect(r.reason).toContain('policy failed');
  });

  it('authorises by public key as well as by node id', () => {
    const policy = new AllowListPolicy({ publicKeys: [controller.publicKey] });
    expect(() => verifyRequest(makeSigned().signed, hostOptions({ policy }))).not.toThrow();
  });
});

describe('verifyRequest: 9. replay', () => {
  it('refuses the second delivery of a request', () => {
    const { signed } = makeSigned();
    const options = hostOptions();
    verifyRequest(signed, options);
    const r = refusalOf(() => verifyRequest(signed, options));
    expect([r.code, r.field]).toEqual(['replay', 'nonce']);
    expect(r.reason).toContain('already used');
  });

  it('fails closed when the nonce memory is full, and recovers once nonces expire', () => {
    const nonces = new NonceGuard({ capacity: 2 });
    const options = hostOptions({ nonces });
    verifyRequest(makeSigned({ ttlMs: 10_000 }).signed, options);
    verifyRequest(makeSigned({ ttlMs: 10_000 }).signed, options);
    const third = makeSigned({ ttlMs: 60_000 });
    const r = refusalOf(() => verifyRequest(third.signed, options));
    expect(r.code).toBe('replay');
    expect(r.reason).toContain('nonce memory is full');
    expect(nonces.has(third.request.nonce)).toBe(false);
    // The first two are remembered until expiry + 30 s skew = T0 + 40 s.
    expect(codeOf(() => verifyRequest(third.signed, hostOptions({ nonces, now: T0 + 39_999 })))).toBe(
      'replay',
    );
    expect(() => verifyRequest(third.signed, hostOptions({ nonces, now: T0 + 40_000 }))).not.toThrow();
    expect(nonces.size).toBe(1);
  });
});

describe('verifyRequest: durable nonces and the start-up fence', () => {
  it('writes the nonce of a mutating request to the journal before accepting it; reads stay in memory', () => {
    const written: [string, number][] = [];
    const nonces = new NonceGuard({ journal: { append: (n, until) => written.push([n, until]) } });
    const place = makeSigned({ method: 'workload.place', decisionId: DECISION });
    verifyRequest(place.signed, hostOptions({ nonces }));
    expect(written).toEqual([
      [place.request.nonce, Math.ceil((place.request.expires_at_ms + 30_000) / 1000) * 1000],
    ]);
    verifyRequest(makeSigned().signed, hostOptions({ nonces }));
    expect(written.length).toBe(1);
  });

  it('refuses with replay (nothing recorded) when the journal cannot be written', () => {
    const nonces = new NonceGuard({
      journal: {
        append: () => {
          throw new Error('ENOSPC');
        },
      },
    });
    const place = makeSigned({ method: 'workload.stop', decisionId: DECISION });
    const r = refusalOf(() => verifyRequest(place.signed, hostOptions({ nonces })));
    expect(r.code).toBe('replay');
    expect(r.message).toContain('nonce journal');
    expect(nonces.has(place.request.nonce)).toBe(false);
  });

  it('refuses a mutating request issued before notIssuedBeforeMs with expired; reads pass', () => {
    const fence = { notIssuedBeforeMs: T0 + 30_000 };
    const stop = makeSigned({ method: 'workload.stop', decisionId: DECISION });
    expect(codeOf(() => verifyRequest(stop.signed, hostOptions(fence)))).toBe('expired');
    expect(() => verifyRequest(makeSigned().signed, hostOptions(fence))).not.toThrow();
    const later = makeSigned({ method: 'workload.stop', decisionId: DECISION, now: T0 + 30_000 });
    expect(() => verifyRequest(later.signed, hostOptions({ ...fence, now: T0 + 1000 }))).not.toThrow();
  });
});

describe('verifyRequest: string limits count UTF-8 bytes', () => {
  it('a method of 100 two-byte characters (200 bytes) fails the schema (3b), not the method list (3d)', () => {
    const signed = signObject(requestRecord({ method: '\u00e9'.repeat(100) }));
    expect(codeOf(() => verifyRequest(signed, hostOptions()))).toBe('invalid_request');
    const r = refusalOf(() => verifyRequest(signed, hostOptions()));
    expect(r.message).toContain('128 bytes of UTF-8');
    // 64 two-byte characters are exactly 128 bytes: within the limit, so the method list decides.
    const fits = signObject(requestRecord({ method: '\u00e9'.repeat(64) }));
    expect(codeOf(() => verifyRequest(fits, hostOptions()))).toBe('unknown_method');
  });
});
