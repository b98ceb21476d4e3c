import { CliError, ExitCode } from './cli-error.js';

/**
 * Why {@link parseArgv} refused a command line (stable, snake_case):
 * - `unknown_flag`: a flag the command does not take (`field`: its name as typed, without dashes);
 * - `missing_value`: a string flag at the end of the line, or followed by another flag;
 * - `unexpected_value`: a boolean flag given a value (`--force=yes`);
 * - `missing_flag`: a required flag not given;
 * - `missing_argument`: fewer positionals than the command needs (`field`: the first one missing);
 * - `unexpected_argument`: more positionals than the command takes (`token`: the first extra one);
 * - `unknown_command`: a subcommand the command does not have (`field`: `subcommand`, with "did you
 *   mean"; an unknown top-level command is reported with the program's help instead).
 */
export type ArgErrorReason =
  | 'unknown_flag'
  | 'missing_value'
  | 'unexpected_value'
  | 'missing_flag'
  | 'missing_argument'
  | 'unexpected_argument'
  | 'unknown_command';

/** Every {@link ArgErrorReason}, for documentation and tests. */
export const ARG_ERROR_REASONS: readonly ArgErrorReason[] = [
  'unknown_flag',
  'missing_value',
  'unexpected_value',
  'missing_flag',
  'missing_argument',
  'unexpected_argument',
  'unknown_command',
];

/**
 * A command line the parser refused: a usage error (code `usage`, exit 2) that says itself what was
 * wrong: `reason`, the flag or argument name in `field`, and the word as typed in `token`. With
 * `--json` both are printed beside the code (`{"error":{"code":"usage","field":"tierr",
 * "reason":"unknown_flag","token":"--tierr",...}}`).
 */
export class ArgError extends CliError {
  /** Why the line was refused. */
  readonly reason: ArgErrorReason;
  /** The word of the command line it is about, as typed (absent for a missing one). */
  readonly token: string | undefined;

  constructor(reason: ArgErrorReason, message: string, field: string | undefined, token?: string) {
    super('usage', message, ExitCode.usage, {
      ...(field === undefined ? {} : { field }),
      details: { reason, ...(token === undefined ? {} : { token }) },
    });
    this.reason = reason;
    this.token = token;
  }
}
