/** What a revocation names: a package id, a signer's public key or an artifact (file content) hash. */
export const REVOCATION_KINDS: readonly ['package', 'signer', 'artifact'] = [
  'package',
  'signer',
  'artifact',
] as const;

/** One of {@link REVOCATION_KINDS}. */
export type RevocationKind = (typeof REVOCATION_KINDS)[number];

/**
 * The references of a workload that revocations are checked against: its package id, the public keys
 * of the signers that vouched for it and the hashes of its files (all lower-case hex).
 */
export interface RevocationRefs {
  /** The package id (BLAKE3 of the statement), hex. Absent for a workload that has none (a store pin). */
  readonly packageId?: string;
  /** Public keys (hex) of the signers that vouched for it. */
  readonly signerKeys: readonly string[];
  /** BLAKE3 hashes (hex) of its files. */
  readonly artifactHashes: readonly string[];
}

/**
 * The first reference found revoked; kind `list-unavailable` when the revocation list could not be
 * loaded or verified and the check fails closed (then everything counts as revoked).
 */
export interface RevokedSubject {
  /** What was found revoked. */
  readonly kind: RevocationKind | 'list-unavailable';
  /** The revoked reference (hex); for `list-unavailable`, the reference asked about or `*`. */
  readonly ref: string;
  /** Why, as the revocation says. */
  readonly reason?: string;
}

/**
 * Anything that can say whether a workload's references are revoked: the signed `RevocationList` of
 * `@heddle/package`, the in-memory `RevocationSet` of `@heddle/gate`, or a test double.
 */
export interface RevocationCheck {
  /** The first revoked reference among `refs` (package, then signers, then artifacts), or undefined. */
  firstRevoked(refs: RevocationRefs): RevokedSubject | undefined;
}
