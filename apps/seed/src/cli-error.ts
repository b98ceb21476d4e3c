import { CliError, ExitCode, toCliError as sharedToCliError } from '@heddle/cli-kit';
import { SeedApiFailure } from '@heddle/seed-adapter';

/**
 * Exit codes of `heddle-seed`, stable for scripts: 0 success, 1 the Seed (or the adapter talking to
 * it) failed or refused, 2 usage error (unknown command, bad flag), 3 bad input (a profile, pins or
 * policy file that is missing or invalid, a bad argument, a cog that is not pinned), 4 internal error.
 * These are the shared codes of `@heddle/cli-kit`.
 */
export { badInput, CliError, ExitCode, usageError } from '@heddle/cli-kit';

/** Codes of the adapter's errors that mean bad input on this side (exit 3); the rest exit 1. */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set([
  'invalid_argument',
  'credentials',
  'insecure',
  'invalid_config',
  'unknown_instance',
  'pin_invalid',
  'policy_invalid',
]);

/**
 * Maps anything a command threw to a {@link CliError}: a `CliError` as is, a `HeddleError` (the
 * adapter's `SeedError`, the runtime's `RuntimeError`, ...) with its code (exit 3 for bad input on
 * this side, else 1), anything else as an internal error (exit 4). A Seed API failure met inside a
 * governed transition keeps the client's code (one cause, one code: a token the Seed refuses is
 * `not_paired`, exit 1, whether `logs` or `run` met it).
 */
export function toCliError(err: unknown): CliError {
  if (err instanceof SeedApiFailure) {
    const exit = BAD_INPUT_CODES.has(err.seedCode) ? ExitCode.badInput : ExitCode.failed;
    return new CliError(err.seedCode, err.message, exit, err.field ? { field: err.field } : undefined);
  }
  return sharedToCliError(err, (e) => (BAD_INPUT_CODES.has(e.code) ? ExitCode.badInput : ExitCode.failed));
}
