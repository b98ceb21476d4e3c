import { describe, expect, it } from 'vitest';
import { fromHex, toHex, utf8 } from './bytes.js';
import { DomainTag, type DomainTagValue, domainMessage, signWithDomain, verifyWithDomain } from './domain.js';
import { nobleBackend } from './ed25519/noble.js';
import { publicKeyFromSecret, sign, verify } from './ed25519/sign.js';

const sk = fromHex('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb');
const pk = publicKeyFromSecret(sk);
const tags = Object.values(DomainTag) as DomainTagValue[];

describe('domain separation', () => {
  it('the signed bytes are UTF-8 of the tag followed by the message', () => {
    const m = Uint8Array.of(1, 2, 3);
    expect(toHex(domainMessage(DomainTag.ctlRequest, m))).toBe(
      `${toHex(utf8('heddle.ctl.request.v1\n'))}010203`,
    );
    const sig = signWithDomain(DomainTag.nodeFacts, sk, m);
    expect(toHex(sig)).toBe(toHex(sign(sk, domainMessage(DomainTag.nodeFacts, m))));
    expect(verify(pk, domainMessage(DomainTag.nodeFacts, m), sig, nobleBackend)).toBe(true);
  });

  it('tags are distinct, newline-terminated, and none is a prefix of another', () => {
    expect(new Set(tags).size).toBe(tags.length);
    for (const a of tags) {
      expect(a.endsWith('\n')).toBe(true);
      expect(a.indexOf('\n')).toBe(a.length - 1);
      for (const b of tags) if (a !== b) expect(b.startsWith(a)).toBe(false);
    }
  });

  it('a signature made under one tag verifies under that tag only', () => {
    const m = utf8('{"op":"status"}');
    for (const t of tags) {
      const sig = signWithDomain(t, sk, m);
      for (const u of tags) expect(verifyWithDomain(u, pk, m, sig)).toBe(t === u);
      expect(verify(pk, m, sig)).toBe(false);
      expect(verifyWithDomain(t, pk, utf8('{"op":"stop"}'), sig)).toBe(false);
    }
  });

  it('unknown tags and malformed arguments are TypeErrors', () => {
    const bad = 'heddle.ctl.request.v2\n' as unknown as DomainTagValue;
    expect(() => domainMessage(bad, new Uint8Array(0))).toThrow(TypeError);
    expect(() => signWithDomain(bad, sk, new Uint8Array(0))).toThrow(TypeError);
    expect(() => verifyWithDomain(bad, pk, new Uint8Array(0), new Uint8Array(64))).toThrow(TypeError);
    expect(() => verifyWithDomain(DomainTag.revocation, pk, new Uint8Array(0), new Uint8Array(63))).toThrow(
      TypeError,
    );
    expect(() => signWithDomain(DomainTag.revocation, sk.subarray(1), new Uint8Array(0))).toThrow(TypeError);
  });

  it('DomainTag is frozen', () => {
    expect(Object.isFrozen(DomainTag)).toBe(true);
  });
});
