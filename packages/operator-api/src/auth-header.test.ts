import { DomainTag, generateKeyPair, sha256Hex, toHex, utf8 } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalRequest,
  formatSignedAuth,
  isAuthIssue,
  parseSignedAuth,
  type SignedAuth,
  signedMessage,
  signRequest,
  verifySignedAuth,
} from './auth-header.js';

const hex = (n: number): fc.Arbitrary<string> =>
  fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('hex'));
const auth: fc.Arbitrary<SignedAuth> = fc.record({
  key: hex(32),
  ts: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }).filter((n) => String(n).length <= 15),
  nonce: hex(16),
  sig: hex(64),
});

describe('the Heddle-Ed25519 header', () => {
  it('parses what it formats, whatever the order of the parameters and the spaces around them', () => {
    fc.assert(
      fc.property(
        auth,
        fc.shuffledSubarray(['key', 'ts', 'nonce', 'sig'] as const, { minLength: 4 }),
        fc.constantFrom('', ' ', '  ', '\t'),
        (a, order, sp) => {
          expect(parseSignedAuth(formatSignedAuth(a))).toEqual(a);
          const text = `Heddle-Ed25519 ${order.map((k) => `${sp}${k}=${a[k]}${sp}`).join(',')}`;
          expect(parseSignedAuth(text)).toEqual(a);
        },
      ),
    );
  });

  it('never throws on junk, and answers an issue for anything that is not a whole header', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (junk) => {
        const r = parseSignedAuth(junk);
        expect(isAuthIssue(r)).toBe(true);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (junk) => {
        const r = parseSignedAuth(`Heddle-Ed25519 ${junk}`);
        // Junk after the scheme parses only in the astronomically unlikely case it is a valid header.
        expect(isAuthIssue(r)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('names the parameter that is wrong', () => {
    const a = { key: 'ab'.repeat(32), ts: 1767225600000, nonce: 'cd'.repeat(16), sig: 'ef'.repeat(64) };
    const ok = formatSignedAuth(a);
    const cases: [string, string][] = [
      [ok.replace('Heddle-Ed25519', 'Bearer'), 'scheme'],
      [ok.replace(`key=${a.key}`, `key=${a.key.toUpperCase()}`), '$'],
      [ok.replace(`key=${a.key}`, `key=${a.key.slice(2)}`), 'key'],
      [ok.replace('ts=1767225600000', 'ts=01767225600000'), 'ts'],
      [ok.replace('ts=1767225600000', 'ts=9999999999999999'), 'ts'],
      [ok.replace(`nonce=${a.nonce}`, `nonce=${a.nonce}00`), 'nonce'],
      [ok.replace(`, sig=${a.sig}`, ''), 'sig'],
      [`${ok}, sig=${a.sig}`, 'sig'],
      [`${ok}, extra=00`, 'extra'],
      [`${ok},`, '$'],
      [`${ok}${' '.repeat(1024)}`, '$'],
    ];
    for (const [text, field] of cases) {
      const r = parseSignedAuth(text);
      expect(isAuthIssue(r) ? r.field : 'parsed', text.slice(0, 60)).toBe(field);
    }
  });
});

describe('the signature of a request', () => {
  const keys = generateKeyPair();
  const req = {
    method: 'POST',
    target: '/v1/place?x=1',
    ts: 1767225600000,
    nonce: 'ab'.repeat(16),
    body: utf8('{"a":1}'),
  };

  it('covers the domain tag and the canonical string: method, target, ts, nonce and the body digest', () => {
    expect(canonicalRequest(req)).toBe(
      `POST\n/v1/place?x=1\n1767225600000\n${'ab'.repeat(16)}\n${sha256Hex(utf8('{"a":1}'))}`,
    );
    expect(Buffer.from(signedMessage(req)).toString('utf8')).toBe(
      `${DomainTag.operatorRequest}${canonicalRequest(req)}`,
    );
    // The digest of an empty body, as a client without a body signs it.
    expect(
      canonicalRequest({ ...req, body: new Uint8Array() }).endsWith(
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      ),
    ).toBe(true);
  });

  it('verifies the request signed, and no other: each part changed fails', () => {
    const a = signRequest(keys, req);
    expect(a.key).toBe(toHex(keys.publicKey));
    expect(verifySignedAuth(a, req)).toBe(true);
    expect(verifySignedAuth(a, { ...req, method: 'GET' })).toBe(false);
    expect(verifySignedAuth(a, { ...req, target: '/v1/place?x=2' })).toBe(false);
    expect(verifySignedAuth(a, { ...req, body: utf8('{"a":2}') })).toBe(false);
    expect(verifySignedAuth({ ...a, ts: a.ts + 1 }, req)).toBe(false);
    expect(verifySignedAuth({ ...a, nonce: 'cd'.repeat(16) }, req)).toBe(false);
    expect(verifySignedAuth({ ...a, key: toHex(generateKeyPair().publicKey) }, req)).toBe(false);
    expect(verifySignedAuth({ ...a, key: '00'.repeat(32) }, req)).toBe(false);
  });
});
