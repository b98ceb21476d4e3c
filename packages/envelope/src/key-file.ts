import { statSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-file.js';
import { readTextBounded } from './bounded-fs.js';
import { equalBytes, fromHex, isBytes, toHex } from './bytes.js';
import { publicKeyFromSecret } from './ed25519/sign.js';
import { EnvelopeError } from './errors.js';
import { HEX64_RE } from './formats.js';
import { type KeyPair, keyPairFromSecret, nodeIdFromPublicKey } from './keys.js';
import { parseJson } from './strict-json.js';
import { firstZodIssue } from './zod-issues.js';

/** The `kind` of a Heddle secret key file. */
export const SECRET_KEY_FILE_KIND = 'heddle.ed25519.secret-key.v1';

const hex32 = z.string().regex(HEX64_RE, 'expected 64 lower-case hex characters');

/** Schema of a secret key file: `{kind, secret_key, public_key, node_id}` (hex). */
export const SecretKeyFileSchema: z.ZodType<SecretKeyFile> = z.strictObject({
  kind: z.literal(SECRET_KEY_FILE_KIND),
  secret_key: hex32,
  public_key: hex32,
  node_id: z.string().regex(/^[0-9a-f]{32}$/, 'expected 32 lower-case hex characters'),
});

/** The JSON content of a secret key file. The public key and node id are there for people and tools. */
export interface SecretKeyFile {
  kind: typeof SECRET_KEY_FILE_KIND;
  secret_key: string;
  public_key: string;
  node_id: string;
}

/** Options of {@link saveKeyFile}. */
export interface SaveKeyFileOptions {
  /** Replace an existing file (default false: refuse with `key_file_exists`). */
  readonly overwrite?: boolean;
}

/**
 * Saves a key pair as an owner-only (0600) file, atomically. Throws a TypeError when the public key
 * does not belong to the secret key (such a file could never be loaded).
 */
export function saveKeyFile(path: string, keys: KeyPair, options: SaveKeyFileOptions = {}): void {
  if (!options.overwrite) {
    let exists = true;
    try {
      statSync(path);
    } catch {
      exists = false;
    }
    if (exists) {
      throw new EnvelopeError('key_file_exists', `${path} already exists; refusing to overwrite a key`);
    }
  }
  if (!isBytes(keys.secretKey, 32) || !isBytes(keys.publicKey, 32)) {
    throw new TypeError('keys must hold a 32-byte secretKey and a 32-byte publicKey');
  }
  if (!equalBytes(publicKeyFromSecret(keys.secretKey), keys.publicKey)) {
    throw new TypeError('publicKey does not belong to secretKey');
  }
  const body: SecretKeyFile = {
    kind: SECRET_KEY_FILE_KIND,
    secret_key: toHex(keys.secretKey),
    public_key: toHex(keys.publicKey),
    node_id: nodeIdFromPublicKey(keys.publicKey),
  };
  writeFileAtomic(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Loads a key pair from a secret key file. Refuses (code `key_file_permissions`) a file that group or
 * others may read or write, like ssh does; refuses (code `key_file_invalid`, naming the field) a
 * malformed file or one whose public key does not belong to its secret key.
 */
export function loadKeyFile(path: string): KeyPair {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    throw new EnvelopeError('key_file_missing', `cannot read key file ${path}`, { cause: err });
  }
  if (!st.isFile()) throw new EnvelopeError('key_file_invalid', `${path} is not a regular file`);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(3, '0');
    throw new EnvelopeError(
      'key_file_permissions',
      `${path} has mode ${mode}: a secret key must be readable by its owner only (chmod 600)`,
    );
  }
  if (st.size > 4096) throw new EnvelopeError('key_file_invalid', `${path} is too large to be a key file`);
  let parsed: unknown;
  try {
    parsed = parseJson(readTextBounded(path, 4096));
  } catch (err) {
    // The parser names a JSON path ($.secret_key); key file fields are named as zod names them.
    const jsonPath = (err instanceof EnvelopeError && err.field) || '$';
    const field = jsonPath.startsWith('$.') ? jsonPath.slice(2) : jsonPath;
    const why = err instanceof Error ? `: ${err.message}` : '';
    throw new EnvelopeError('key_file_invalid', `${path} is not valid JSON${why}`, { field, cause: err });
  }
  const r = SecretKeyFileSchema.safeParse(parsed);
  if (!r.success) {
    const { field, message } = firstZodIssue(r.error);
    throw new EnvelopeError('key_file_invalid', `${path}: field ${field}: ${message}`, { field });
  }
  const keys = keyPairFromSecret(fromHex(r.data.secret_key, 32));
  if (!equalBytes(keys.publicKey, fromHex(r.data.public_key, 32))) {
    throw new EnvelopeError('key_file_invalid', `${path}: field public_key does not match secret_key`, {
      field: 'public_key',
    });
  }
  if (nodeIdFromPublicKey(keys.publicKey) !== r.data.node_id) {
    throw new EnvelopeError('key_file_invalid', `${path}: field node_id does not match the key`, {
      field: 'node_id',
    });
  }
  return keys;
}
