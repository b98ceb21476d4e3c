import { firstZodIssue, HeddleError } from '@heddle/envelope';
import type { z } from 'zod';

/**
 * The verification codes of a workload package (docs/package-format.md, section 6), stable
 * strings a caller may switch on. They are part of the public contract.
 */
export type VerifyErrorCode =
  | 'manifest_invalid'
  | 'missing_signature'
  | 'untrusted_signer'
  | 'bad_signature'
  | 'file_missing'
  | 'file_tampered'
  | 'revoked';

/**
 * Every code `@heddle/package` throws: the verification codes plus those of the other parts (source
 * manifests, trust files, store pins, the content store, pieces and the revocation list).
 */
export type PackageErrorCode =
  | VerifyErrorCode
  | 'source_invalid'
  | 'build_failed'
  | 'trust_invalid'
  | 'pin_invalid'
  | 'store_invalid'
  | 'store_missing'
  | 'store_corrupt'
  | 'piece_map_invalid'
  | 'piece_rejected'
  | 'artifact_mismatch'
  | 'revocation_invalid'
  | 'revocation_list_invalid'
  | 'revocation_rollback'
  | 'revocation_list_expired'
  | 'revocation_generation_jump'
  | 'unknown_kind'
  | 'config_invalid'
  | 'package_missing'
  | 'revocation_entries_dropped'
  | 'revocation_generation_reused';

/**
 * An error from `@heddle/package`. `code` is one of {@link PackageErrorCode}; `field` names the input
 * field (a dotted path such as `body.files[2].path`) or the file the error is about, when there is one.
 */
export class PackageError extends HeddleError {
  /** The stable code. */
  declare readonly code: PackageErrorCode;

  constructor(
    code: PackageErrorCode,
    message: string,
    options?: { field?: string | undefined; cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/**
 * The first zod issue as `{field, message}` in this package's spelling: array indices in brackets
 * (`body.files[2].path`), `$` for the root, prefixed with `prefix` when given, and the message led by
 * the field (`body.files[2].path: ...`). Built on `@heddle/envelope`'s `firstZodIssue`, which spells
 * indices as dotted segments; no schema here has a record key made of digits only, so every all-digit
 * segment is an index.
 */
export function zodIssue(error: z.ZodError, prefix = ''): { field: string; message: string } {
  const issue = firstZodIssue(error);
  let field = prefix;
  if (issue.field !== '$') {
    for (const segment of issue.field.split('.')) {
      if (/^[0-9]+$/.test(segment)) field += `[${segment}]`;
      else field += field === '' ? segment : `.${segment}`;
    }
  }
  if (field === '') field = '$';
  return { field, message: `${field}: ${issue.message}` };
}
