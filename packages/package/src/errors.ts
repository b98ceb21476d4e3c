import { HeddleError } from '@heddle/envelope';

/**
 * The verification codes of a workload package (DESIGN section 5), stable strings a caller may switch
 * on. They are part of the public contract.
 */
export type VerifyErrorCode =
  | 'manifest-invalid'
  | 'missing-signature'
  | 'untrusted-signer'
  | 'bad-signature'
  | 'file-missing'
  | 'file-tampered'
  | 'revoked';

/**
 * Every code `@heddle/package` throws: the verification codes plus those of the other parts (source
 * manifests, trust files, store pins, the content store, pieces and the revocation list).
 */
export type PackageErrorCode =
  | VerifyErrorCode
  | 'source-invalid'
  | 'build-failed'
  | 'trust-invalid'
  | 'pin-invalid'
  | 'store-invalid'
  | 'store-missing'
  | 'store-corrupt'
  | 'piece-map-invalid'
  | 'piece-rejected'
  | 'artifact-mismatch'
  | 'revocation-invalid'
  | 'revocation-list-invalid'
  | 'revocation-rollback'
  | 'unknown-kind'
  | 'config-invalid';

/**
 * An error from `@heddle/package`. `code` is one of {@link PackageErrorCode}; `field` names the input
 * field (a dotted path such as `body.files[2].path`) or the file the error is about, when there is one.
 */
export class PackageError extends HeddleError {
  /** The stable code. */
  declare readonly code: PackageErrorCode;

  constructor(code: PackageErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * Formats the first zod issue as `field: message` and returns the field (dotted path, `$` for the
 * root), prefixed with `prefix` when given.
 */
export function zodIssue(
  error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> },
  prefix = '',
): { field: string; message: string } {
  const issue = error.issues[0];
  let path = prefix;
  for (const p of issue?.path ?? []) {
    if (typeof p === 'number') path += `[${p}]`;
    else path += path === '' ? String(p) : `.${String(p)}`;
  }
  const field = path === '' ? '$' : path;
  return { field, message: `${field}: ${issue?.message ?? 'invalid'}` };
}
