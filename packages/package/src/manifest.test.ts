import { canonicalJson, DomainTag, toHex, utf8, verify } from '@heddle/envelope';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PackageError } from './errors.js';
import { encodeEnvelope, type PackageEnvelope, packageIdOf, statementBytes } from './format.js';
import { parseEnvelope } from './manifest.js';
import { buildSigned, fixedKeys } from './test-fixtures.js';

describe('statement, package id and manifest hash', () => {
  it('match an independent BLAKE3 (@noble/hashes) and the documented preimages', async () => {
    const keys = fixedKeys(9);
    const built = await buildSigned([keys]);
    const env = built.package.envelope;
    const statement = canonicalJson({ schema: env.schema, kind: env.kind, body: env.body });
    expect(new TextDecoder().decode(statementBytes(env))).toBe(statement);
    expect(statement.startsWith('{"body":{')).toBe(true);
    expect(built.package.packageId).toBe(toHex(nobleBlake3(utf8(statement))));
    expect(built.package.manifestHash).toBe(toHex(nobleBlake3(encodeEnvelope(env))));
    const sig = env.signatures[0] as { signature: string };
    const message = new Uint8Array([...utf8('heddle.package.v1\n'), ...utf8(statement)]);
    expect(DomainTag.packageStatement).toBe('heddle.package.v1\n');
    expect(verify(keys.publicKey, message, Buffer.from(sig.signature, 'hex'))).toBe(true);
  });

  it('packageIdOf is BLAKE3 of a hand-written statement (keys sorted, UTF-8, escapes, no signatures)', () => {
    const digest = 'ab'.repeat(32);
    const env: PackageEnvelope = {
      schema: 'heddle.package.v1',
      kind: 'cog',
      // Members deliberately out of order; strings with a non-ASCII character, a quote and a control.
      body: {
        version: '1.0.0',
        source: 'caf\u00e9 "x"\u0001',
        id: 'x',
        files: [{ size: 3, path: 'a', blake3: digest }],
      },
      signatures: [{ public_key: '11'.repeat(32), signature: '22'.repeat(64) }],
    };
    const statement =
      '{"body":{"files":[{"blake3":"' +
      digest +
      '","path":"a","size":3}],"id":"x","source":"caf\u00e9 \\"x\\"\\u0001","version":"1.0.0"},' +
      '"kind":"cog","schema":"heddle.package.v1"}';
    expect(new TextDecoder().decode(statementBytes(env))).toBe(statement);
    expect(packageIdOf(env)).toBe(toHex(nobleBlake3(new TextEncoder().encode(statement))));
    const unsigned: PackageEnvelope = { ...env, signatures: [] };
    expect(packageIdOf(unsigned)).toBe(packageIdOf(env));
  });
});

describe('parseEnvelope: junk input', () => {
  const field = (bytes: Uint8Array | string): string | undefined => {
    try {
      parseEnvelope(typeof bytes === 'string' ? utf8(bytes) : bytes);
      return 'ok';
    } catch (err) {
      expect(err).toBeInstanceOf(PackageError);
      expect((err as PackageError).code).toBe('manifest_invalid');
      return (err as PackageError).field;
    }
  };

  it('names the field for each kind of malformed envelope', async () => {
    const built = await buildSigned([fixedKeys(1)]);
    const env = built.package.envelope;
    const enc = (e: unknown) => `${canonicalJson(e)}\n`;
    expect(field('')).toBe('$');
    expect(field('not json')).toBe('$');
    expect(field(new Uint8Array([0xff, 0xfe]))).toBe('$');
    expect(field('{"schema":"a","schema":"b"}')).toBe('$');
    expect(field('{"x":1.5}')).toBe('$.x');
    expect(field(enc({ ...env, schema: 'x' }))).toBe('schema');
    expect(field(enc({ ...env, kind: 'Bad Kind' }))).toBe('kind');
    expect(field(enc({ ...env, kind: 'unknown' }))).toBe('kind');
    expect(field(enc({ ...env, body: [] }))).toBe('body');
    expect(field(enc({ ...env, signatures: [{ public_key: 'zz', signature: 'a' }] }))).toBe(
      'signatures[0].public_key',
    );
    expect(field(enc({ ...env, body: { ...env.body, id: 'UPPER' } }))).toBe('body.id');
    expect(field(enc({ ...env, body: { ...env.body, files: [] } }))).toBe('body.files');
    expect(field(JSON.stringify(env, null, 2))).toBe('heddle-package.json');
    expect(field(enc(env).trimEnd())).toBe('heddle-package.json');
    const twoSigs = { ...env, signatures: [env.signatures[0], env.signatures[0]] };
    expect(field(enc(twoSigs))).toBe('signatures[1]');
  });

  it('refuses a variant naming a file not in the package, a wasi route on x86_64 and a misnamed variant', async () => {
    const built = await buildSigned([]);
    const env = built.package.envelope as PackageEnvelope;
    const withVariants = (variants: unknown) =>
      `${canonicalJson({ ...env, body: { ...env.body, variants } })}\n`;
    expect(field(withVariants({ 'x86_64-native': { route: 'native', arch: 'x86_64', file: 'nope' } }))).toBe(
      'body.variants.x86_64-native.file',
    );
    expect(field(withVariants({ 'x86_64-wasi': { route: 'wasi', arch: 'x86_64', file: 'run.wasm' } }))).toBe(
      'body.variants.x86_64-wasi.route',
    );
    expect(field(withVariants({ fast: { route: 'native', arch: 'x86_64', file: 'run.wasm' } }))).toBe(
      'body.variants.fast',
    );
  });

  it('never throws anything but manifest_invalid for random bytes or random JSON (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.json().map((j) => utf8(j)),
        ),
        (bytes) => {
          expect(field(bytes)).not.toBe('ok');
        },
      ),
      { numRuns: 500 },
    );
  });
});
