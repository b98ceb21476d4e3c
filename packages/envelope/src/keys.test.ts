import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from './bytes.js';
import { publicKeyFromSecret, sign, verify } from './ed25519/sign.js';
import { EnvelopeError } from './errors.js';
import {
  generateKeyPair,
  isNodeId,
  keyPairFromSecret,
  NODE_ID_HEX_LENGTH,
  nodeIdFromPublicKey,
  parsePublicKey,
  publicKeyToPem,
} from './keys.js';

// RFC 8032 TEST 1.
const TEST1_SECRET = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const TEST1_PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';

function refusesKey(text: unknown): void {
  let caught: unknown;
  try {
    parsePublicKey(text as string);
  } catch (err) {
    caught = err;
  }
  expect(caught, String(text).slice(0, 60)).toBeInstanceOf(EnvelopeError);
  expect((caught as EnvelopeError).code).toBe('invalid_public_key');
}

describe('key pairs', () => {
  it('generateKeyPair gives a fresh, working pair each time', () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    expect(a.secretKey).toHaveLength(32);
    expect(a.publicKey).toHaveLength(32);
    expect(toHex(a.secretKey)).not.toBe(toHex(b.secretKey));
    expect(a.publicKey).toEqual(publicKeyFromSecret(a.secretKey));
    const msg = new TextEncoder().encode('hi');
    expect(verify(a.publicKey, msg, sign(a.secretKey, msg))).toBe(true);
    expect(verify(b.publicKey, msg, sign(a.secretKey, msg))).toBe(false);
  });

  it('keyPairFromSecret derives the RFC 8032 public key', () => {
    const kp = keyPairFromSecret(fromHex(TEST1_SECRET));
    expect(toHex(kp.publicKey)).toBe(TEST1_PUBLIC);
    expect(toHex(kp.secretKey)).toBe(TEST1_SECRET);
    expect(() => keyPairFromSecret(new Uint8Array(31))).toThrow(TypeError);
  });
});

describe('node ids', () => {
  it('are the first 128 bits of SHA-256 of the public key (fixed vector)', () => {
    const pk = fromHex(TEST1_PUBLIC);
    const expected = createHash('sha256').update(pk).digest('hex').slice(0, 32);
    expect(expected).toBe('21fe31dfa154a261626bf854046fd227'); // also computed with Python's hashlib
    expect(nodeIdFromPublicKey(pk)).toBe(expected);
    expect(NODE_ID_HEX_LENGTH).toBe(32);
  });

  it('match the definition for random keys and are well formed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (pk) => {
        const id = nodeIdFromPublicKey(pk);
        expect(id).toBe(createHash('sha256').update(pk).digest('hex').slice(0, 32));
        expect(isNodeId(id)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('stay correct for many keys, past the size of the node id cache, and for reused buffers', () => {
    const expected = (pk: Uint8Array): string =>
      createHash('sha256').update(pk).digest('hex').slice(0, NODE_ID_HEX_LENGTH);
    const keys = Array.from({ length: 3000 }, (_, i) => {
      const pk = new Uint8Array(32);
      new DataView(pk.buffer).setUint32(0, i);
      pk[31] = 0xa5;
      return pk;
    });
    for (const pk of keys) expect(nodeIdFromPublicKey(pk)).toBe(expected(pk));
    // The first ones were evicted; the last ones are held: both give the same answer again.
    for (const pk of [...keys.slice(0, 50), ...keys.slice(-50)])
      expect(nodeIdFromPublicKey(pk)).toBe(expected(pk));
    // Keyed by content: the same buffer with new bytes is a new key.
    const buf = Uint8Array.from(keys[0] as Uint8Array);
    const first = nodeIdFromPublicKey(buf);
    buf[5] = (buf[5] as number) ^ 0xff;
    expect(nodeIdFromPublicKey(buf)).not.toBe(first);
    expect(nodeIdFromPublicKey(buf)).toBe(expected(buf));
  });

  it('nodeIdFromPublicKey refuses anything but 32 bytes', () => {
    for (const bad of [
      new Uint8Array(31),
      new Uint8Array(33),
      TEST1_PUBLIC,
      null,
      [...fromHex(TEST1_PUBLIC)],
    ]) {
      expect(() => nodeIdFromPublicKey(bad as Uint8Array)).toThrow(TypeError);
    }
  });

  it('isNodeId accepts exactly 32 lower-case hex characters', () => {
    expect(isNodeId('0'.repeat(32))).toBe(true);
    expect(isNodeId('21fe31dfa154a261626bf854046fd227')).toBe(true);
    for (const bad of [
      '0'.repeat(31),
      '0'.repeat(33),
      'A'.repeat(32),
      `${'0'.repeat(31)}g`,
      `${'0'.repeat(32)}\n`,
    ]) {
      expect(isNodeId(bad)).toBe(false);
    }
    for (const bad of [null, undefined, 1, ['0'.repeat(32)]]) expect(isNodeId(bad)).toBe(false);
  });
});

describe('parsePublicKey / publicKeyToPem', () => {
  const pk = fromHex(TEST1_PUBLIC);

  it('reads 64 hex characters in either case, with surrounding white space', () => {
    expect(parsePublicKey(TEST1_PUBLIC)).toEqual(pk);
    expect(parsePublicKey(TEST1_PUBLIC.toUpperCase())).toEqual(pk);
    expect(parsePublicKey(`  ${TEST1_PUBLIC}\n`)).toEqual(pk);
  });

  it('round-trips through PEM, which node:crypto reads as the same Ed25519 key', () => {
    const pem = publicKeyToPem(pk);
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/);
    expect(parsePublicKey(pem)).toEqual(pk);
    const jwk = createPublicKey(pem).export({ format: 'jwk' });
    expect(jwk.crv).toBe('Ed25519');
    expect(toHex(Buffer.from(jwk.x as string, 'base64url'))).toBe(TEST1_PUBLIC);
  });

  it('reads a PEM made by node:crypto', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const pem = publicKey.export({ format: 'pem', type: 'spki' }) as string;
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
    expect(toHex(parsePublicKey(pem))).toBe(toHex(raw));
  });

  it('round-trips random keys through PEM and hex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (key) => {
        const onCurve = publicKeyFromSecret(key);
        expect(parsePublicKey(publicKeyToPem(onCurve))).toEqual(onCurve);
        expect(parsePublicKey(toHex(onCurve))).toEqual(onCurve);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses PEM keys of other types', () => {
    const others = [
      generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey,
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey,
      generateKeyPairSync('x25519').publicKey, // same DER length as Ed25519, different OID
      generateKeyPairSync('ed448').publicKey,
    ];
    for (const key of others) refusesKey(key.export({ format: 'pem', type: 'spki' }));
    const ed = generateKeyPairSync('ed25519');
    refusesKey(ed.privateKey.export({ format: 'pem', type: 'pkcs8' }));
  });

  it('refuses junk', () => {
    const junk: unknown[] = [
      '',
      'x',
      TEST1_PUBLIC.slice(1),
      `${TEST1_PUBLIC}0`,
      `${TEST1_PUBLIC.slice(2)}zz`,
      `0x${TEST1_PUBLIC}`,
      `${TEST1_PUBLIC.slice(0, 32)} ${TEST1_PUBLIC.slice(32)}`,
      '-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n',
      '-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      null,
      undefined,
      42,
      pk,
    ];
    for (const j of junk) refusesKey(j);
  });

  it('publicKeyToPem refuses anything but 32 bytes', () => {
    for (const bad of [new Uint8Array(31), new Uint8Array(33), TEST1_PUBLIC]) {
      expect(() => publicKeyToPem(bad as Uint8Array)).toThrow(TypeError);
    }
  });
});
