import { type CliError, ExitCode } from './cli-error.js';
import { type ErrorSink, reportCliError } from './report-error.js';

/** Where a CLI writes: standard output and standard error, a line at a time. */
export interface LineSink extends ErrorSink {
  /** Writes a line to standard output. */
  out(line: string): void;
}

/** How {@link dispatchCli} runs a program's commands. */
export interface DispatchOptions<C extends { readonly summary: string }, Io extends LineSink> {
  /** The program name (`heddle`, `heddle-host`, `heddle-seed`): it starts every error line. */
  readonly prefix: string;
  /** The commands by name. */
  readonly commands: Readonly<Record<string, C>>;
  /** The top-level help (printed for no command, `help`, `--help`, `-h`, and after an unknown one). */
  readonly helpText: () => string;
  /**
   * What `<command> --help` prints, or undefined when the command answers `--help` itself (it then
   * runs with the flag).
   */
  readonly commandHelp: (name: string, command: C) => string | undefined;
  /** Runs a command with its arguments. */
  readonly run: (command: C, args: readonly string[], io: Io) => number | Promise<number>;
  /** Maps what a command threw to a `CliError` (default: `toCliError`). */
  readonly toCliError?: (err: unknown) => CliError;
}

/**
 * The top of a `runCli`: no command (exit 2) or `help` prints the help; an unknown command prints it
 * after an error line (exit 2); `<command> --help` prints the command's help; anything a command
 * throws is reported by {@link reportCliError} (`--json` anywhere among its arguments selects the
 * JSON form). Never throws.
 */
export async function dispatchCli<C extends { readonly summary: string }, Io extends LineSink>(
  argv: readonly string[],
  io: Io,
  options: DispatchOptions<C, Io>,
): Promise<number> {
  const [name, ...rest] = argv;
  const json = rest.includes('--json');
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.out(options.helpText());
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  const command = Object.hasOwn(options.commands, name) ? options.commands[name] : undefined;
  if (command === undefined) {
    io.err(`${options.prefix}: unknown command ${JSON.stringify(name)}\n\n${options.helpText()}`);
    return ExitCode.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    const help = options.commandHelp(name, command);
    if (help !== undefined) {
      io.out(help);
      return ExitCode.ok;
    }
  }
  try {
    return await options.run(command, rest, io);
  } catch (err) {
    return reportCliError(err, {
      name,
      json,
      io,
      prefix: options.prefix,
      ...(options.toCliError === undefined ? {} : { toCliError: options.toCliError }),
    });
  }
}
