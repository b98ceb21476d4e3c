import { HeddleError } from '@heddle/envelope/errors';

/**
 * The exit codes every Heddle CLI shares, stable for scripts and service managers: 0 success (also a
 * clean daemon shutdown on SIGTERM/SIGINT), 1 a failure while running (a check that failed, a refusal
 * from the other side), 2 usage error (unknown command, bad flag), 3 bad input (a file or argument that
 * is missing, unreadable or invalid), 4 internal error.
 */
export const ExitCode: {
  readonly ok: 0;
  readonly failed: 1;
  readonly usage: 2;
  readonly badInput: 3;
  readonly internal: 4;
} = {
  ok: 0,
  failed: 1,
  usage: 2,
  badInput: 3,
  internal: 4,
} as const;

/** Options of a {@link CliError}. */
export interface CliErrorOptions {
  /** The input field the error is about (a flag, a config field), when there is one. */
  readonly field?: string;
  /** The underlying error. */
  readonly cause?: unknown;
  /** Extra fields printed with `--json` (never a secret). */
  readonly details?: Record<string, unknown>;
}

/** An error that ends a command with a given exit code and a message for the operator. */
export class CliError extends HeddleError {
  /** The process exit code this error maps to. */
  readonly exitCode: number;
  /** Extra fields printed with `--json` (never a secret). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: string, message: string, exitCode: number, options?: CliErrorOptions) {
    super(code, message, {
      ...(options?.field === undefined ? {} : { field: options.field }),
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.exitCode = exitCode;
    this.details = options?.details;
  }
}

/** A usage error (exit code 2), code `usage`. */
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
