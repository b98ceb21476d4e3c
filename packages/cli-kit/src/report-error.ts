import { HeddleError } from '@heddle/envelope/errors';
import { CliError, ExitCode } from './cli-error.js';
import { systemCliError } from './system-error.js';

/** Where an error report is written: the command's standard error. */
export interface ErrorSink {
  /** Writes a line to standard error. */
  err(line: string): void;
}

/**
 * Maps anything a command threw to a {@link CliError}: a `CliError` as is; any other `HeddleError`
 * with its code and field and the exit code `exitFor` gives it (default 3, bad input); a full disk, a
 * read-only file system or a refused permission with its own code (`disk_full`,
 * `read_only_filesystem`, `permission_denied`; exit 1: see `systemCliError`); anything else as an
 * internal error (exit 4) whose message carries the stack.
 */
export function toCliError(
  err: unknown,
  exitFor: (err: HeddleError) => number = () => ExitCode.badInput,
): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof HeddleError) {
    return new CliError(err.code, err.message, exitFor(err), err.field ? { field: err.field } : undefined);
  }
  const system = systemCliError(err);
  if (system !== undefined) return system;
  return new CliError(
    'internal',
    `internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    ExitCode.internal,
  );
}

/** How {@link reportCliError} reports. */
export interface ReportOptions {
  /** The command that failed (`place`, `run`). */
  readonly name: string;
  /** Print `{"error":{code,message,field,...details}}` instead of the human line. */
  readonly json: boolean;
  /** Where the report goes. */
  readonly io: ErrorSink;
  /** The program name the human line starts with (`heddle`, `heddle-host`). */
  readonly prefix: string;
  /** Maps what was thrown to a `CliError`; default {@link toCliError} (a `HeddleError` exits 3). */
  readonly toCliError?: (err: unknown) => CliError;
}

/**
 * Reports what a command threw on standard error and returns its exit code: with `json` one line
 * `{"error":{"code","message","field",...details}}`; otherwise `<prefix> <name>: <message>` (the
 * message as is when it already starts with `<prefix> <name>`). Never throws.
 */
export function reportCliError(err: unknown, options: ReportOptions): number {
  const e = (options.toCliError ?? toCliError)(err);
  const { io, name, prefix } = options;
  if (options.json) {
    io.err(
      JSON.stringify({ error: { code: e.code, message: e.message, field: e.field, ...(e.details ?? {}) } }),
    );
  } else {
    io.err(e.message.startsWith(`${prefix} ${name}`) ? e.message : `${prefix} ${name}: ${e.message}`);
  }
  return e.exitCode;
}
