import {
  canonicalBytes,
  DomainTag,
  fromHex,
  type KeyPair,
  signWithDomain,
  toHex,
  verifyWithDomain,
} from '@heddle/envelope';
import {
  REVOCATION_KINDS,
  type RevocationCheck,
  type RevocationKind,
  type RevokedSubject,
} from '@heddle/model';
import { z } from 'zod';
import { PackageError, zodIssue } from './errors.js';
import { hex64, hex128 } from './hex.js';

/** The `schema` field of the message a revocation entry's signature covers. */
export const REVOCATION_ENTRY_SCHEMA = 'heddle.revocation.entry.v1';

/**
 * A {@link RevocationCheck} that revokes nothing, for a caller that deliberately verifies without a
 * revocation list (a build machine checking its own output, a demo). A host enforcing revocations
 * passes its list instead (`RevocationList.loadOrFailClosed`).
 */
export const NO_REVOCATIONS: RevocationCheck = Object.freeze({
  firstRevoked: (): RevokedSubject | undefined => undefined,
});

/** A signed revocation entry as stored in the list. */
export interface RevocationEntry {
  kind: RevocationKind;
  /** 64 lower-case hex characters: a package id, a public key or a BLAKE3 hash. */
  ref: string;
  /** When the operator revoked it (ms since the epoch). */
  revoked_at_ms: number;
  /** Why, for people (at most 200 characters). */
  reason?: string;
  /** The operator key that signed the entry, hex. */
  signer: string;
  /** Ed25519 over `"heddle.revocation.v1\n" || canonical({schema, kind, ref, revoked_at_ms, reason?})`, hex. */
  signature: string;
}

/** Schema of one entry. */
export const RevocationEntrySchema: z.ZodType<RevocationEntry> = z.strictObject({
  kind: z.enum(REVOCATION_KINDS),
  ref: hex64(),
  revoked_at_ms: z.int().nonnegative(),
  reason: z.string().max(200).exactOptional(),
  signer: hex64(),
  signature: hex128(),
});

/** The bytes an entry's signature covers (after the `heddle.revocation.v1\n` domain tag). */
export function revocationEntryMessage(
  entry: Pick<RevocationEntry, 'kind' | 'ref' | 'revoked_at_ms' | 'reason'>,
): Uint8Array {
  return canonicalBytes({
    schema: REVOCATION_ENTRY_SCHEMA,
    kind: entry.kind,
    ref: entry.ref,
    revoked_at_ms: entry.revoked_at_ms,
    reason: entry.reason,
  });
}

/** What to revoke. */
export interface RevocationInput {
  readonly kind: RevocationKind;
  readonly ref: string;
  readonly revokedAtMs: number;
  readonly reason?: string;
}

/**
 * Signs a revocation entry with an operator key. Throws `revocation_invalid` naming the field when the
 * input is malformed (the ref must be 64 lower-case hex characters).
 */
export function signRevocationEntry(input: RevocationInput, keys: KeyPair): RevocationEntry {
  const draft = {
    kind: input.kind,
    ref: input.ref,
    revoked_at_ms: input.revokedAtMs,
    ...(input.reason === undefined ? {} : { reason: input.reason }),
    signer: toHex(keys.publicKey),
    signature: '0'.repeat(128),
  };
  const r = RevocationEntrySchema.safeParse(draft);
  if (!r.success) {
    const { field, message } = zodIssue(r.error);
    throw new PackageError('revocation_invalid', message, { field });
  }
  const signature = signWithDomain(DomainTag.revocation, keys.secretKey, revocationEntryMessage(draft));
  return { ...draft, signature: toHex(signature) };
}

/** True when `entry`'s signature is valid for its named signer (it says nothing about trusting the signer). */
export function verifyRevocationEntry(entry: RevocationEntry): boolean {
  try {
    return verifyWithDomain(
      DomainTag.revocation,
      fromHex(entry.signer, 32),
      revocationEntryMessage(entry),
      fromHex(entry.signature, 64),
    );
  } catch {
    return false;
  }
}
