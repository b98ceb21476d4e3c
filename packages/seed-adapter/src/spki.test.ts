import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { normalizeSpkiPin, spkiSha256 } from './spki.js';
import { selfSignedCert } from './test-tls.js';

describe('spkiSha256', () => {
  const c = selfSignedCert('seed');
  it('agrees with openssl for PEM, DER and X509Certificate', () => {
    const pub = execFileSync('openssl', ['x509', '-pubkey', '-noout'], { input: c.cert });
    const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: pub });
    const viaOpenssl = execFileSync('openssl', ['dgst', '-sha256', '-r'], { input: der })
      .toString()
      .split(' ')[0];
    const x = new X509Certificate(c.cert);
    expect(spkiSha256(c.cert)).toBe(viaOpenssl);
    expect(spkiSha256(x.raw)).toBe(viaOpenssl);
    expect(spkiSha256(x)).toBe(viaOpenssl);
    expect(c.spki).toBe(viaOpenssl);
  });
  it('refuses what is not a certificate', () => {
    expect(() => spkiSha256('nope')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
  it('normalizes pins', () => {
    const h = 'ab'.repeat(32);
    expect(normalizeSpkiPin(`sha256:${h.toUpperCase()}`)).toBe(h);
    expect(normalizeSpkiPin(h.match(/../g)?.join(':') ?? '')).toBe(h);
    expect(() => normalizeSpkiPin('ab')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});
