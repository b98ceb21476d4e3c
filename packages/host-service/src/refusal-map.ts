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

/**
 * The refusal (authenticated: it answers a verified request) for an error met while handling one:
 * a `Refusal` as is; a `RuntimeError` by its code (`invalid_config` as `invalid_request`); a
 * `PackageError` as `verify`; a `WireError` of the package fetch as `verify` when the controller
 * served bytes that do not match what it named (a bad piece, a wrong file, a manifest that does not
 * hash to its name), else `fetch` (timeout, closed connection, a refused request, a size claim over
 * this node's limits); anything else as `runtime`. The reason keeps a package or wire error's own
 * code in front (wire errors carry it in their message already).
 */
export function refusalOf(err: unknown, what: string): Refusal {
  if (err instanceof Refusal) return err;
  const message = err instanceof Error ? err.message : String(err);
  let code: RefusalCode = 'runtime';
  let reason = `${what}: ${message}`;
  let field: string | undefined;
  if (err instanceof RuntimeError) {
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
