import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from './atomic-file.js';
import { fromHex, toHex } from './bytes.js';
import { EnvelopeError } from './errors.js';
import { loadKeyFile, SECRET_KEY_FILE_KIND, saveKeyFile } from './key-file.js';
import { generateKeyPair, keyPairFromSecret, nodeIdFromPublicKey } from './keys.js';

const isWindows = process.platform === 'win32';
let dir = '';
let counter = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'heddle-envelope-keys-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function fresh(name = 'key.json'): string {
  const sub = join(dir, `case-${counter++}`);
  mkdirSync(sub);
  return join(sub, name);
}

function refusal(f: () => unknown): EnvelopeError {
  let caught: unknown;
  try {
    f();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(EnvelopeError);
  return caught as EnvelopeError;
}

const kp = keyPairFromSecret(fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'));

function validBody(): Record<string, unknown> {
  return {
    kind: SECRET_KEY_FILE_KIND,
    secret_key: toHex(kp.secretKey),
    public_key: toHex(kp.publicKey),
    node_id: nodeIdFromPublicKey(kp.publicKey),
  };
}

/** Writes `content` as an owner-only file, as if by hand. */
function writeKey(content: string): string {
  const path = fresh();
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

describe('saveKeyFile / loadKeyFile', () => {
  it('round-trips a key pair through an owner-only file', () => {
    const path = fresh();
    const pair = generateKeyPair();
    saveKeyFile(path, pair);
    if (!isWindows) expect(statSync(path).mode & 0o777).toBe(0o600);
    const loaded = loadKeyFile(path);
    expect(loaded.secretKey).toEqual(pair.secretKey);
    expect(loaded.publicKey).toEqual(pair.publicKey);
    const body = JSON.parse(readFileSync(path, 'utf8'));
    expect(body).toEqual({
      kind: SECRET_KEY_FILE_KIND,
      secret_key: toHex(pair.secretKey),
      public_key: toHex(pair.publicKey),
      node_id: nodeIdFromPublicKey(pair.publicKey),
    });
    expect(readdirSync(join(path, '..'))).toEqual(['key.json']);
  });

  it('refuses to overwrite unless asked, then replaces the key', () => {
    const path = fresh();
    saveKeyFile(path, kp);
    const other = generateKeyPair();
    const e = refusal(() => saveKeyFile(path, other));
    expect(e.code).toBe('key_file_exists');
    expect(toHex(loadKeyFile(path).secretKey)).toBe(toHex(kp.secretKey));
    saveKeyFile(path, other, { overwrite: true });
    expect(toHex(loadKeyFile(path).secretKey)).toBe(toHex(other.secretKey));
    if (!isWindows) expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(path, '..'))).toEqual(['key.json']);
  });

  it('refuses to save a public key that does not belong to the secret key', () => {
    const path = fresh();
    const other = generateKeyPair();
    expect(() => saveKeyFile(path, { secretKey: kp.secretKey, publicKey: other.publicKey })).toThrow(
      TypeError,
    );
    expect(() => saveKeyFile(path, { secretKey: new Uint8Array(31), publicKey: kp.publicKey })).toThrow(
      TypeError,
    );
    expect(readdirSync(join(path, '..'))).toEqual([]);
  });

  it.skipIf(isWindows)(
    'refuses files that group or others may read or write (code key_file_permissions)',
    () => {
      for (const mode of [0o644, 0o640, 0o604, 0o660, 0o606, 0o620, 0o602, 0o610, 0o601, 0o777]) {
        const path = fresh();
        saveKeyFile(path, kp);
        chmodSync(path, mode);
        const e = refusal(() => loadKeyFile(path));
        expect(e.code, mode.toString(8)).toBe('key_file_permissions');
        expect(e.message).toContain(mode.toString(8));
      }
      for (const mode of [0o600, 0o400, 0o700]) {
        const path = fresh();
        saveKeyFile(path, kp);
        chmodSync(path, mode);
        expect(toHex(loadKeyFile(path).publicKey), mode.toString(8)).toBe(toHex(kp.publicKey));
      }
    },
  );

  it('a missing file is key_file_missing', () => {
    const e = refusal(() => loadKeyFile(join(dir, 'does-not-exist.json')));
    expect(e.code).toBe('key_file_missing');
  });

  it('a directory is key_file_invalid', () => {
    const sub = fresh('a-directory');
    mkdirSync(sub, { mode: 0o700 });
    expect(refusal(() => loadKeyFile(sub)).code).toBe('key_file_invalid');
  });

  it('refuses malformed content with code key_file_invalid, naming the field', () => {
    const mismatched = generateKeyPair();
    const cases: [string, string][] = [
      ['not json', '$'],
      ['', '$'],
      ['{"kind":"x",}', '$'],
      [`{"kind":"${SECRET_KEY_FILE_KIND}","secret_key":"a\u0001b"}`, 'secret_key'],
      [`{"kind":"${SECRET_KEY_FILE_KIND}","secret_key":"a\ud800"}`, 'secret_key'],
      ['[]', '$'],
      ['null', '$'],
      [JSON.stringify({ ...validBody(), kind: 'heddle.ed25519.secret-key.v2' }), 'kind'],
      [JSON.stringify({ ...validBody(), kind: undefined }), 'kind'],
      [JSON.stringify({ ...validBody(), secret_key: toHex(kp.secretKey).toUpperCase() }), 'secret_key'],
      [JSON.stringify({ ...validBody(), secret_key: toHex(kp.secretKey).slice(2) }), 'secret_key'],
      [JSON.stringify({ ...validBody(), secret_key: 42 }), 'secret_key'],
      [JSON.stringify({ ...validBody(), public_key: `${toHex(kp.publicKey).slice(2)}zz` }), 'public_key'],
      [JSON.stringify({ ...validBody(), public_key: toHex(mismatched.publicKey) }), 'public_key'],
      [JSON.stringify({ ...validBody(), node_id: nodeIdFromPublicKey(mismatched.publicKey) }), 'node_id'],
      [JSON.stringify({ ...validBody(), node_id: 'abc' }), 'node_id'],
      [JSON.stringify({ ...validBody(), extra: 1 }), '$'],
      [`{"kind":"${SECRET_KEY_FILE_KIND}","kind":"${SECRET_KEY_FILE_KIND}"}`, '$'],
    ];
    for (const [content, field] of cases) {
      const path = writeKey(content);
      const e = refusal(() => loadKeyFile(path));
      expect(e.message).toContain(path);
      expect(e.code, content).toBe('key_file_invalid');
      expect(e.field, content).toBe(field);
      if (field !== '$') expect(e.message, content).toContain(field);
    }
  });

  it('refuses an oversized file with key_file_invalid', () => {
    const e = refusal(() => loadKeyFile(writeKey(`${JSON.stringify(validBody())}${' '.repeat(5000)}`)));
    expect(e.code).toBe('key_file_invalid');
  });

  it('accepts a hand-written file in compact form', () => {
    const path = writeKey(JSON.stringify(validBody()));
    expect(toHex(loadKeyFile(path).publicKey)).toBe(toHex(kp.publicKey));
  });
});

describe('writeFileAtomic', () => {
  const listing = (path: string): string[] => readdirSync(join(path, '..')).sort();

  it('creates and then replaces content, leaving no temporary files', () => {
    const path = fresh('state.txt');
    writeFileAtomic(path, 'one');
    expect(readFileSync(path, 'utf8')).toBe('one');
    writeFileAtomic(path, Uint8Array.of(0x74, 0x77, 0x6f));
    expect(readFileSync(path, 'utf8')).toBe('two');
    writeFileAtomic(path, '');
    expect(readFileSync(path, 'utf8')).toBe('');
    const big = 'x'.repeat(3_000_000);
    writeFileAtomic(path, big);
    expect(readFileSync(path, 'utf8')).toBe(big);
    expect(listing(path)).toEqual(['state.txt']);
  });

  it.skipIf(isWindows)('sets the mode of the new file', () => {
    const path = fresh('secret');
    writeFileAtomic(path, 's', { mode: 0o600 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    writeFileAtomic(path, 'p', { mode: 0o600 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const plain = fresh('plain');
    writeFileAtomic(plain, 'p');
    expect(statSync(plain).mode & 0o600).toBe(0o600);
    expect(statSync(plain).mode & 0o022).toBe(0);
  });

  it('writes only the visible bytes of a view', () => {
    const path = fresh('view');
    writeFileAtomic(path, Uint8Array.of(1, 2, 3, 4, 5).subarray(1, 3));
    expect([...readFileSync(path)]).toEqual([2, 3]);
  });

  it('cleans up its temporary file when the rename fails', () => {
    const target = fresh('occupied');
    mkdirSync(target);
    writeFileSync(join(target, 'inside'), 'x');
    expect(() => writeFileAtomic(target, 'data')).toThrow();
    expect(listing(target)).toEqual(['occupied']);
  });

  it('throws for a missing directory and creates nothing', () => {
    const path = join(dir, 'no-such-dir', 'f');
    expect(() => writeFileAtomic(path, 'x')).toThrow();
  });
});
