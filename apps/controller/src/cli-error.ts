import { HeddleError } from '@heddle/envelope';

/**
 * Exit codes of `heddle`, stable for scripts:
 * 0 success, 1 a check failed (for example a chain that does not verify), 2 usage error (unknown
 * command, bad flag), 3 bad input (a file that is missing, unreadable or malformed), 4 internal error.
 */
export const ExitCode = {
  ok: 0,
  checkFailed: 1,
  usage: 2,
  badInput: 3,
  internal: 4,
} as const;

/** An error that ends a command with a given exit code and a message for the operator. */
export class CliError extends HeddleError {
  /** The process exit code this error maps to. */
  readonly exitCode: number;

  constructor(
    code: string,
    message: string,
    exitCode: number,
    options?: { field?: string; cause?: unknown },
  ) {
    super(code, message, options);
    this.exitCode = exitCode;
  }
}

/** A usage error (exit code 2). */
export function usageError(message: string, field?: string): CliError {
  return new CliError('usage', message, ExitCode.usage, field === undefined ? undefined : { field });
}
