import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, publicKeyToPem, toHex } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PackageError } from './errors.js';
import { tempDir } from './test-fixtures.js';
import { loadTrustFile, parseTrust, TrustAnchors } from './trust.js';

const fieldOf = (text: string): string | undefined => {
  try {
    parseTrust(text);
    return 'ok';
  } catch (err) {
    expect(err).toMatchObject({ code: 'trust_invalid' });
    return (err as PackageError).field;
  }
};

describe('trust anchors', () => {
  it('reads hex and PEM keys with ids, roles and a threshold', () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    const file = {
      schema: 'heddle.trust.v1',
      keys: [
        { id: 'ops', role: 'operator', public_key: toHex(a.publicKey) },
        { id: 'ci', role: 'publisher', public_key: publicKeyToPem(b.publicKey) },
      ],
      threshold: 2,
    };
    const path = join(tempDir(), 'trust.json');
    writeFileSync(path, JSON.stringify(file));
    const t = loadTrustFile(path);
    expect(t.threshold).toBe(2);
    expect(t.isPinned(toHex(b.publicKey))).toBe(true);
    expect(t.get(toHex(b.publicKey))?.id).toBe('ci');
    expect(t.operatorKeys()).toEqual([toHex(a.publicKey)]);
    expect(t.toJSON().keys[1]?.public_key).toBe(toHex(b.publicKey));
    expect(parseTrust(JSON.stringify(t.toJSON())).anchors).toEqual(t.anchors);
  });

  it('an empty key list is valid and trusts nobody; a threshold above it is refused', () => {
    const empty = parseTrust(JSON.stringify({ schema: 'heddle.trust.v1', keys: [] }));
    expect(empty.anchors).toEqual([]);
    expect(empty.isPinned(toHex(generateKeyPair().publicKey))).toBe(false);
    expect(fieldOf(JSON.stringify({ schema: 'heddle.trust.v1', keys: [], threshold: 2 }))).toBe('threshold');
  });

  it('refuses duplicate ids, duplicate keys, malformed keys and bad thresholds, naming the field', () => {
    const k = toHex(generateKeyPair().publicKey);
    const k2 = toHex(generateKeyPair().publicKey);
    const doc = (keys: unknown, extra: object = {}) =>
      JSON.stringify({ schema: 'heddle.trust.v1', keys, ...extra });
    expect(
      fieldOf(
        doc([
          { id: 'a', role: 'operator', public_key: k },
          { id: 'a', role: 'operator', public_key: k2 },
        ]),
      ),
    ).toBe('keys[1].id');
    expect(
      fieldOf(
        doc([
          { id: 'a', role: 'operator', public_key: k },
          { id: 'b', role: 'publisher', public_key: k.toUpperCase() },
        ]),
      ),
    ).toBe('keys[1].public_key');
    expect(fieldOf(doc([{ id: 'a', role: 'operator', public_key: 'abc' }]))).toBe('keys[0].public_key');
    expect(fieldOf(doc([{ id: 'a', role: 'root', public_key: k }]))).toBe('keys[0].role');
    expect(fieldOf(doc([{ id: 'A B', role: 'operator', public_key: k }]))).toBe('keys[0].id');
    expect(fieldOf(doc([{ id: 'a', role: 'operator', public_key: k }], { threshold: 2 }))).toBe('threshold');
    expect(fieldOf(doc([{ id: 'a', role: 'operator', public_key: k }], { threshold: 0 }))).toBe('threshold');
    expect(fieldOf(doc([{ id: 'a', role: 'operator', public_key: k, extra: 1 }]))).toBe('keys[0]');
    expect(fieldOf('{"schema":"heddle.trust.v1","schema":"x"}')).toBe('$');
    expect(() => new TrustAnchors([{ id: 'a', role: 'operator', publicKey: 'xyz' }])).toThrow(PackageError);
    expect(() => loadTrustFile(join(tempDir(), 'missing.json'))).toThrow(/cannot read trust file/);
  });

  it('refuses random junk without crashing (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        expect(fieldOf(text)).not.toBe('ok');
      }),
    );
  });
});
