import { CliError, ExitCode as SharedExitCode } from '@heddle/cli-kit';

export { CliError, usageError } from '@heddle/cli-kit';

/**
 * Exit codes of `heddle`, stable for scripts:
 * 0 success, 1 a check failed (for example a chain that does not verify), 2 usage error (unknown
 * command, bad flag), 3 bad input (a file that is missing, unreadable or malformed), 4 internal error.
 * The shared codes of `@heddle/cli-kit`, with `checkFailed` naming 1 as this CLI uses it.
 */
export const ExitCode = { ...SharedExitCode, checkFailed: SharedExitCode.failed } as const;

/** A `CliError` with exit code 3 (bad input) naming `field`. */
export function badInput(code: string, message: string, field: string, cause?: unknown): CliError {
  return new CliError(code, message, ExitCode.badInput, {
    field,
    ...(cause === undefined ? {} : { cause }),
  });
}
