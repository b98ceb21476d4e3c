import { HeddleError } from '@heddle/envelope';

/**
 * Exit codes of `heddle-seed`, stable for scripts: 0 success, 1 the Seed (or the adapter talking to
 * it) failed or refused, 2 usage error (unknown command, bad flag), 3 bad input (a profile, pins or
 * policy file that is missing or invalid, a bad argument, a cog that is not pinned), 4 internal error.
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
  /** Extra fields printed with `--json` (never a secret). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: string,
    message: string,
    exitCode: number,
    options?: { field?: string; cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(code, message, {
      ...(options?.field === undefined ? {} : { field: options.field }),
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.exitCode = exitCode;
    this.details = options?.details;
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

/** Codes of the adapter's errors that mean bad input on this side (exit 3); the rest exit 1. */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set([
  'invalid_argument',
  'credentials',
  'insecure',
  'invalid_config',
  'unknown_instance',
  'pin-invalid',
  'policy_invalid',
]);

/**
 * Maps anything a command threw to a {@link CliError}: a `CliError` as is, a `HeddleError` (the
 * adapter's `SeedError`, the runtime's `RuntimeError`, ...) with its code (exit 3 for bad input on
 * this side, else 1), anything else as an internal error (exit 4).
 */
export function toCliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof HeddleError) {
    const exit = BAD_INPUT_CODES.has(err.code) ? ExitCode.badInput : ExitCode.failed;
    return new CliError(err.code, err.message, exit, err.field ? { field: err.field } : undefined);
  }
  return new CliError(
    'internal',
    `internal error: ${(err as Error)?.stack ?? String(err)}`,
    ExitCode.internal,
  );
}
