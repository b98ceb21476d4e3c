import { badInput, CliError, ExitCode } from './cli-error.js';
import { errnoCode, errnoPath } from './error-text.js';

/** What an errno code of the file system means for the operator: a stable error code and advice. */
const SYSTEM_ERRORS: Readonly<Record<string, { readonly code: string; readonly what: string }>> = {
  ENOSPC: { code: 'disk_full', what: 'no space left on the device; free some space, then retry' },
  EDQUOT: { code: 'disk_full', what: 'the disk quota is exhausted; free some space, then retry' },
  EROFS: {
    code: 'read_only_filesystem',
    what: 'the file system is read-only; point the path at a writable place or remount it read-write',
  },
  EACCES: { code: 'permission_denied', what: 'permission denied; check the owner and mode of the path' },
  EPERM: { code: 'permission_denied', what: 'operation not permitted; check the owner and mode of the path' },
  // SQLite's own codes for the same conditions (the SQLite driver puts them in `code`).
  SQLITE_FULL: { code: 'disk_full', what: 'no space left on the device; free some space, then retry' },
  SQLITE_READONLY: {
    code: 'read_only_filesystem',
    what: 'the database cannot be written (read-only file system or file); make it writable',
  },
};

/** The first errno-style `code` (`ENOSPC`, ...) on `err` or along its `cause` chain, with its path. */
function findErrno(err: unknown):
  | {
      errno: string;
      known: { readonly code: string; readonly what: string };
      path: string | undefined;
      message: string;
    }
  | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    const code = errnoCode(e);
    const known = code !== undefined && Object.hasOwn(SYSTEM_ERRORS, code) ? SYSTEM_ERRORS[code] : undefined;
    if (code !== undefined && known !== undefined) {
      return { errno: code, known, path: errnoPath(e), message: e.message };
    }
    e = e.cause;
  }
  return undefined;
}

/** Options of {@link systemCliError}. */
export interface SystemErrorOptions {
  /**
   * The message of what failed (it should carry the errno text, as `badInput` messages do); the advice
   * is appended. Without it the message is the advice, the path and the errno text.
   */
  readonly context?: string;
  /** The input field the failure is about (a config field), when there is one. */
  readonly field?: string;
}

/**
 * Maps a file-system failure that is the environment's, not a bug (a full disk, a read-only file
 * system, a permission refused) to a `CliError` with its own stable code and exit 1 ("failed while
 * running"): `disk_full` (ENOSPC, EDQUOT), `read_only_filesystem` (EROFS), `permission_denied`
 * (EACCES, EPERM). The errno is looked for on the error and along its `cause` chain. Undefined for
 * anything else.
 */
export function systemCliError(err: unknown, options: SystemErrorOptions = {}): CliError | undefined {
  const found = findErrno(err);
  if (found === undefined) return undefined;
  const { known } = found;
  const where = found.path === undefined ? '' : ` (${found.path})`;
  const message =
    options.context === undefined
      ? `${known.what}${where}: ${found.message}`
      : `${options.context}: ${known.what}`;
  return new CliError(known.code, message, ExitCode.failed, {
    cause: err,
    ...(options.field === undefined ? {} : { field: options.field }),
    details: { errno: found.errno, ...(found.path === undefined ? {} : { path: found.path }) },
  });
}

/**
 * A start-up failure of a daemon about a config field: {@link systemCliError} (with `message` as its
 * context) when the cause is a full disk, a read-only file system or a refused permission, else a
 * bad-input error (exit 3) with `code`.
 */
export function inputOrSystemError(code: string, message: string, field: string, cause: unknown): CliError {
  return systemCliError(cause, { context: message, field }) ?? badInput(code, message, field, cause);
}
