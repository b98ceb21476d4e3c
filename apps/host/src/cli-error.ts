import { HeddleError } from '@heddle/envelope';

/**
 * Exit codes of `heddle-host`, stable for scripts and service managers:
 * 0 success (also a clean shutdown on SIGTERM/SIGINT), 1 the daemon failed while running,
 * 2 usage error (unknown command, bad flag), 3 bad input (a config, key, trust or policy file that is
 * missing, unreadable or invalid; files that `init` would overwrite), 4 internal error.
 */
export const ExitCode = {
  ok: 0,
  failed: 1,
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

/** A bad-input error (exit code 3), naming the field when there is one. */
export function badInput(code: string, message: string, field?: string, cause?: unknown): CliError {
  return new CliError(code, message, ExitCode.badInput, {
    ...(field === undefined ? {} : { field }),
    ...(cause === undefined ? {} : { cause }),
  });
}
