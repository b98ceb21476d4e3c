import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { equalBytes, errorMessage, fromUtf8, HeddleError, parseJson } from '@heddle/envelope';
import { defaultKindRegistry } from './cog.js';
import { PackageError, zodIssue } from './errors.js';
import {
  encodeEnvelope,
  manifestHashOf,
  type PackageEnvelope,
  PackageEnvelopeSchema,
  type PackageFile,
  packageIdOf,
  statementBytes,
} from './format.js';
import type { KindRegistry } from './kind-registry.js';
import {
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  ENVELOPE_FILE,
  MAX_ENVELOPE_BYTES,
  type SizeLimits,
} from './limits.js';

/** An envelope that has been read and validated, but whose signatures and files are not yet checked. */
export interface ParsedPackage {
  /** The envelope as parsed. */
  readonly envelope: PackageEnvelope;
  /** The exact bytes of `heddle-package.json`. */
  readonly envelopeBytes: Uint8Array;
  /** The statement bytes (canonical JSON of `{schema, kind, body}`). */
  readonly statement: Uint8Array;
  /** BLAKE3 of the statement, hex. */
  readonly packageId: string;
  /** BLAKE3 of the envelope bytes, hex. */
  readonly manifestHash: string;
  /** The typed body, as the kind's schema returned it. */
  readonly body: unknown;
  /** The files the body lists. */
  readonly files: readonly PackageFile[];
}

/** Options of {@link parseEnvelope} and {@link readEnvelope}. */
export interface ReadEnvelopeOptions extends SizeLimits {
  /** The kind registry (default: {@link defaultKindRegistry}). */
  readonly kinds?: KindRegistry;
}

const invalid = (message: string, field: string, cause?: unknown): PackageError =>
  new PackageError('manifest_invalid', message, { field, cause });

/**
 * Parses and validates envelope bytes: size (at most 1 MiB), UTF-8, strict JSON (integers only,
 * duplicate keys refused), envelope shape, canonical spelling (RFC 8785 plus one line feed, signatures
 * sorted by key, one per key), the kind's body schema, file paths (no traversal, absolute paths or
 * duplicates) and size limits. Every failure is `PackageError` `manifest_invalid` naming the field.
 */
export function parseEnvelope(bytes: Uint8Array, options: ReadEnvelopeOptions = {}): ParsedPackage {
  if (bytes.length > MAX_ENVELOPE_BYTES) {
    throw invalid(`${ENVELOPE_FILE}: larger than ${MAX_ENVELOPE_BYTES} bytes`, ENVELOPE_FILE);
  }
  let value: unknown;
  try {
    value = parseJson(fromUtf8(bytes), { maxBytes: MAX_ENVELOPE_BYTES, integersOnly: true });
  } catch (err) {
    const field = (err instanceof HeddleError ? err.field : undefined) ?? '$';
    throw invalid(`${ENVELOPE_FILE}: ${errorMessage(err)}`, field, err);
  }
  const r = PackageEnvelopeSchema.safeParse(value);
  if (!r.success) {
    const { field, message } = zodIssue(r.error);
    throw invalid(message, field);
  }
  // cast: the schema accepted value; the value itself (not zod's copy) is kept
  const envelope = value as PackageEnvelope;
  const keys = envelope.signatures.map((s) => s.public_key);
  for (let i = 1; i < keys.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    if ((keys[i] as string) <= (keys[i - 1] as string)) {
      throw invalid(
        `signatures[${i}]: signatures must be sorted by public_key, one per key`,
        `signatures[${i}]`,
      );
    }
  }
  if (!equalBytes(bytes, encodeEnvelope(envelope))) {
    throw invalid(
      `${ENVELOPE_FILE}: not in canonical form (RFC 8785 canonical JSON followed by one line feed)`,
      ENVELOPE_FILE,
    );
  }
  const kinds = options.kinds ?? defaultKindRegistry();
  const { body, files } = kinds.parseBody(envelope.kind, envelope.body);
  const maxFile = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxTotal = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  let total = 0;
  for (let i = 0; i < files.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const f = files[i] as PackageFile;
    if (f.size > maxFile) {
      throw invalid(
        `body.files[${i}].size: ${f.size} bytes exceeds the limit of ${maxFile}`,
        `body.files[${i}].size`,
      );
    }
    total += f.size;
  }
  if (total > maxTotal) {
    throw invalid(`body.files: ${total} bytes in total exceeds the limit of ${maxTotal}`, 'body.files');
  }
  const statement = statementBytes(envelope);
  return {
    envelope,
    envelopeBytes: bytes,
    statement,
    packageId: packageIdOf(envelope),
    manifestHash: manifestHashOf(bytes),
    body,
    files,
  };
}

/**
 * Reads `dir/heddle-package.json` (a regular file, not a symbolic link, at most 1 MiB) and parses it
 * with {@link parseEnvelope}. Throws `manifest_invalid` when it is absent or unreadable.
 */
export function readEnvelope(dir: string, options: ReadEnvelopeOptions = {}): ParsedPackage {
  return parseEnvelope(readEnvelopeBytes(dir), options);
}

/** Reads the raw envelope bytes of a package directory, bounded and without following links. */
export function readEnvelopeBytes(dir: string): Uint8Array {
  const path = join(dir, ENVELOPE_FILE);
  let fd: number;
  try {
    const st = lstatSync(path);
    if (!st.isFile()) throw new Error('not a regular file (symbolic links are refused)');
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    throw invalid(`${ENVELOPE_FILE}: cannot read: ${errorMessage(err)}`, ENVELOPE_FILE, err);
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_ENVELOPE_BYTES) {
      throw invalid(`${ENVELOPE_FILE}: larger than ${MAX_ENVELOPE_BYTES} bytes`, ENVELOPE_FILE);
    }
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, off);
  } finally {
    closeSync(fd);
  }
}
