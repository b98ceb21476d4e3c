import { join, resolve } from 'node:path';
import { DomainTag, type KeyPair, signWithDomain, toHex, writeFileAtomic } from '@heddle/envelope';
import { encodeEnvelope, type PackageEnvelope, statementBytes } from './format.js';
import { ENVELOPE_FILE } from './limits.js';
import { type ParsedPackage, parseEnvelope, type ReadEnvelopeOptions, readEnvelope } from './manifest.js';

/**
 * Returns `envelope` with a signature by `keys` over `"heddle.package.v1\n" || statement`. A previous
 * signature by the same key is replaced; signatures stay sorted by public key.
 */
export function signEnvelope(envelope: PackageEnvelope, keys: KeyPair): PackageEnvelope {
  const publicKey = toHex(keys.publicKey);
  const signature = toHex(
    signWithDomain(DomainTag.packageStatement, keys.secretKey, statementBytes(envelope)),
  );
  const signatures = [
    ...envelope.signatures.filter((s) => s.public_key !== publicKey),
    { public_key: publicKey, signature },
  ].sort((a, b) => (a.public_key < b.public_key ? -1 : 1));
  return { ...envelope, signatures };
}

/**
 * Adds a signature by each of `keys` to the package in `dir` and rewrites its envelope atomically.
 * The envelope is validated first (`manifest_invalid`); the files are not read.
 */
export function signPackage(
  dir: string,
  keys: readonly KeyPair[],
  options: ReadEnvelopeOptions = {},
): ParsedPackage {
  const root = resolve(dir);
  let envelope = readEnvelope(root, options).envelope;
  for (const k of keys) envelope = signEnvelope(envelope, k);
  const bytes = encodeEnvelope(envelope);
  const parsed = parseEnvelope(bytes, options);
  writeFileAtomic(join(root, ENVELOPE_FILE), bytes);
  return parsed;
}
