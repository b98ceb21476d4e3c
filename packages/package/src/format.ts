import { blake3Hex, canonicalBytes, canonicalJson, type JsonValue, utf8 } from '@heddle/envelope';
import { z } from 'zod';
import { hex64, hex128 } from './hex.js';
import { MAX_SIGNATURES, PACKAGE_SCHEMA } from './limits.js';

/** One signature of an envelope: the signer's Ed25519 public key and the signature, both lower-case hex. */
export interface PackageSignature {
  /** The signer's public key, 64 lower-case hex characters. */
  public_key: string;
  /** Ed25519 over `"heddle.package.v1\n" || statement`, 128 lower-case hex characters. */
  signature: string;
}

/** The signed envelope stored as `heddle-package.json`. */
export interface PackageEnvelope {
  /** Always `heddle.package.v1`. */
  schema: typeof PACKAGE_SCHEMA;
  /** The workload kind, such as `cog`; selects the body schema in the kind registry. */
  kind: string;
  /** The kind-specific body. */
  body: { [key: string]: JsonValue };
  /** Signatures, sorted by `public_key`, at most one per key. */
  signatures: PackageSignature[];
}

/** One file of a package as the body lists it. */
export interface PackageFile {
  /** Relative path inside the package directory (see `packagePathProblem`). */
  path: string;
  /** Size in bytes. */
  size: number;
  /** BLAKE3-256 of the content, 64 lower-case hex characters. */
  blake3: string;
}

/** A kind name: lower case, starting with a letter, at most 32 characters. */
export const KIND_RE: RegExp = /^[a-z][a-z0-9-]{0,31}$/;

/** Schema of one signature entry. */
export const PackageSignatureSchema: z.ZodType<PackageSignature> = z.strictObject({
  public_key: hex64('an Ed25519 public key'),
  signature: hex128('an Ed25519 signature'),
});

/** Schema of the envelope (the body is checked by the kind registry afterwards). */
export const PackageEnvelopeSchema: z.ZodType<PackageEnvelope> = z.strictObject({
  schema: z.literal(PACKAGE_SCHEMA),
  kind: z.string().regex(KIND_RE, 'expected a kind name matching [a-z][a-z0-9-]{0,31}'),
  body: z.record(z.string(), z.custom<JsonValue>()),
  signatures: z.array(PackageSignatureSchema).max(MAX_SIGNATURES),
});

/** Schema of one file entry: `{path, size, blake3}` (the path rules are checked separately). */
export const PackageFileSchema: z.ZodType<PackageFile> = z.strictObject({
  path: z.string().min(1).max(255),
  size: z.int().nonnegative(),
  blake3: hex64('a BLAKE3-256 digest'),
});

/**
 * The statement of a package: the UTF-8 bytes of the RFC 8785 canonical JSON of
 * `{schema, kind, body}`. This is what is signed (after the domain tag) and hashed into the package id.
 */
export function statementBytes(envelope: Pick<PackageEnvelope, 'schema' | 'kind' | 'body'>): Uint8Array {
  return canonicalBytes({ schema: envelope.schema, kind: envelope.kind, body: envelope.body });
}

/** The package id: BLAKE3-256 of the statement, as hex. Signatures do not change it. */
export function packageIdOf(envelope: Pick<PackageEnvelope, 'schema' | 'kind' | 'body'>): string {
  return blake3Hex(statementBytes(envelope));
}

/**
 * The exact bytes of `heddle-package.json`: canonical JSON of the whole envelope (signatures sorted by
 * public key) followed by one line feed. A verifier refuses any other spelling, so one package with one
 * set of signatures has exactly one manifest hash.
 */
export function encodeEnvelope(envelope: PackageEnvelope): Uint8Array {
  const signatures = [...envelope.signatures].sort((a, b) => (a.public_key < b.public_key ? -1 : 1));
  return utf8(`${canonicalJson({ ...envelope, signatures })}\n`);
}

/** The manifest hash: BLAKE3-256 of the raw envelope bytes, as hex (the key a host fetches a package by). */
export function manifestHashOf(envelopeBytes: Uint8Array): string {
  return blake3Hex(envelopeBytes);
}
