import { PackageError } from '@heddle/package';
import { Refusal, type RefusalCode } from '@heddle/protocol';
import { RuntimeError } from '@heddle/runtime';
import { WireError } from '@heddle/wire';

/** Fetch failures that say the controller served something other than what it named: `verify`. */
const INTEGRITY_CODES: ReadonlySet<string> = new Set([
  'manifest_mismatch',
  'manifest_invalid',
  'piece_rejected',
  'artifact_mismatch',
]);

/** Errno codes of a full filesystem (or a full quota): refused as `no_space`. */
const NO_SPACE_ERRNOS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/** The errno code (`ENOSPC`, ...) of `err` or of an error along its `cause` chain, if any. */
function errnoOf(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    // cast: an errno error carries its code as a string property (checked just below)
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && NO_SPACE_ERRNOS.has(code)) return code;
    e = e.cause;
  }
  return undefined;
}

/**
 * The refusal (authenticated: it answers a verified request) for an error met while handling one:
 * a `Refusal` as is; a `RuntimeError` by its code (`invalid_config` as `invalid_request`); a
 * `PackageError` as `verify`; a `WireError` of the package fetch as `verify` when the controller
 * served bytes that do not match what it named (a bad piece, a wrong file, a manifest that does not
 * hash to its name), else `fetch` (timeout, closed connection, a refused request, a size claim over
 * this node's limits); a full filesystem (`ENOSPC`, `EDQUOT` on the error or along its `cause` chain,
 * whatever else wraps it) as `no_space`; anything else as `runtime`. The reason keeps a package or wire error's own
 * code in front (wire errors carry it in their message already).
 */
export function refusalOf(err: unknown, what: string): Refusal {
  if (err instanceof Refusal) return err;
  const message = err instanceof Error ? err.message : String(err);
  let code: RefusalCode = 'runtime';
  let reason = `${what}: ${message}`;
  let field: string | undefined;
  const errno = errnoOf(err);
  if (errno !== undefined) {
    code = 'no_space';
    reason = `${what}: no space left on this node's disk (${errno}): ${message}`;
  } else if (err instanceof RuntimeError) {
    code = err.code === 'invalid_config' ? 'invalid_request' : err.code;
    field = err.field;
  } else if (err instanceof PackageError) {
    code = 'verify';
    reason = `${what}: ${err.code}: ${message}`;
  } else if (err instanceof WireError) {
    code = INTEGRITY_CODES.has(err.code) ? 'verify' : 'fetch';
    field = err.field;
  }
  return new Refusal(code, reason, {
    authenticated: true,
    cause: err,
    ...(field === undefined ? {} : { field }),
  });
}
