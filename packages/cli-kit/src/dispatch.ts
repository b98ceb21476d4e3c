import { ArgError } from './arg-error.js';
import { type CliError, ExitCode, usageError } from './cli-error.js';
import { type CommandDef, commandWord, findSubcommand, isRunnable } from './command-def.js';
import { COMPLETION_SHELLS, type CompletionCommand, completionScript } from './completion.js';
import { commandHelp, type ProgramDef, programHelp, synopsis } from './help.js';
import { parseArgv } from './parse-args.js';
import { type ErrorSink, reportCliError } from './report-error.js';
import { didYouMean } from './suggest.js';

/** Where a CLI writes: standard output and standard error, a line at a time. */
export interface LineSink extends ErrorSink {
  /** Writes a line to standard output. */
  out(line: string): void;
}

/** How {@link dispatchCli} runs a program's commands. */
export interface DispatchOptions<C extends CommandDef, Io extends LineSink> {
  /** The program: its name, version, commands (their definitions), exit codes. */
  readonly program: ProgramDef<C>;
  /**
   * Runs a top-level command with the words after its name (a subcommand's word first, when it has
   * subcommands). The command parses them with `parseArgv` and its definition.
   */
  readonly run: (command: C, args: readonly string[], io: Io) => number | Promise<number>;
  /** Maps what a command threw to a `CliError` (default: `toCliError`). */
  readonly toCliError?: (err: unknown) => CliError;
}

const isHelp = (a: string): boolean => a === '--help' || a === '-h';

/**
 * The top of a `runCli`, with the conventions of kubectl and nomad, the same for every program: no
 * command prints the help (exit 2); `help`, `--help` and `-h` print it (exit 0); `--version` and
 * `version` print `<name> <version>` (with `--json`: `{"name","version"}`); `help <command>
 * [<subcommand>]` is `<command> [<subcommand>] --help` (a `--help` after `--` is the command's own
 * argument), which prints the help rendered from the definition and exits 0; `completion bash|zsh`
 * prints a completion script generated from the definitions; an unknown command or subcommand is
 * refused (exit 2) with "did you mean", so is a group of subcommands called without one; anything a
 * command throws is reported by {@link reportCliError} (`--json` anywhere among its arguments selects
 * the JSON form). Never throws.
 */
export async function dispatchCli<C extends CommandDef, Io extends LineSink>(
  argv: readonly string[],
  io: Io,
  options: DispatchOptions<C, Io>,
): Promise<number> {
  const { program } = options;
  const [name, ...rest] = argv;
  const json = rest.includes('--json');
  if (name === undefined || name === 'help' || isHelp(name)) {
    const asked = name === 'help' ? rest.filter((a) => !a.startsWith('-')) : [];
    if (asked.length > 0) return dispatchCli([...asked.slice(0, 2), '--help'], io, options);
    io.out(programHelp(program));
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === '--version' || name === 'version') {
    io.out(
      json
        ? JSON.stringify({ name: program.name, version: program.version })
        : `${program.name} ${program.version}`,
    );
    return ExitCode.ok;
  }
  const report = (err: unknown, what: string): number =>
    reportCliError(err, {
      name: what,
      json,
      io,
      prefix: program.name,
      ...(options.toCliError === undefined ? {} : { toCliError: options.toCliError }),
    });
  if (name === 'completion') return completion(rest, io, program, report);
  const command = program.commands.find((c) => c.name === name);
  if (command === undefined) {
    const hint = didYouMean(name, [...program.commands.map((c) => c.name), 'help', 'version', 'completion']);
    io.err(`${program.name}: unknown command ${JSON.stringify(name)}${hint}\n\n${programHelp(program)}`);
    return ExitCode.usage;
  }
  const end = rest.indexOf('--');
  const wantsHelp = rest.slice(0, end < 0 ? undefined : end).some(isHelp);
  let shown: CommandDef = command;
  const [first] = rest;
  if (command.subcommands !== undefined && command.subcommands.length > 0) {
    const words = command.subcommands.map(commandWord);
    const group = `\nusage: ${program.name} ${name} <${words.join('|')}> ... (${program.name} ${name} --help lists them)`;
    if (first !== undefined && !first.startsWith('-')) {
      const sub = findSubcommand(command, first);
      if (sub === undefined) {
        const all = [...words, ...command.subcommands.flatMap((s) => s.aliases ?? [])];
        const message = `unknown subcommand ${JSON.stringify(first)}${didYouMean(first, all)}${group}`;
        return report(new ArgError('unknown_command', message, 'subcommand', first), name);
      }
      shown = sub;
    } else if (!wantsHelp && !isRunnable(command)) {
      return report(new ArgError('missing_argument', `missing <subcommand>${group}`, 'subcommand'), name);
    }
  }
  if (wantsHelp) {
    io.out(commandHelp(program, shown));
    return ExitCode.ok;
  }
  try {
    return await options.run(command, rest, io);
  } catch (err) {
    return report(err, name);
  }
}

/** The built-in `completion` command, as its help shows it. */
const COMPLETION: CommandDef = {
  name: 'completion',
  summary: 'print a completion script for bash or zsh, generated from the command definitions',
  positionals: [{ name: 'shell', description: `the shell: ${COMPLETION_SHELLS.join(' or ')}` }],
  flags: [],
  examples: [
    'completion bash > /etc/bash_completion.d/<program> (or: source <(<program> completion bash))',
    'completion zsh > _<program> in a directory on $fpath (or: source <(<program> completion zsh) after compinit)',
  ],
};

/** `completion bash|zsh`: prints the script, built from the command definitions. */
function completion(
  args: readonly string[],
  io: LineSink,
  program: ProgramDef,
  report: (err: unknown, what: string) => number,
): number {
  const def: CommandDef = {
    ...COMPLETION,
    examples: (COMPLETION.examples ?? []).map((e) => e.replaceAll('<program>', program.name)),
  };
  if (args.some(isHelp)) {
    io.out(commandHelp(program, def));
    return ExitCode.ok;
  }
  try {
    const [word = ''] = parseArgv(program.name, def, args).positionals;
    const shell = COMPLETION_SHELLS.find((s) => s === word);
    if (shell === undefined) {
      throw usageError(
        `unknown shell ${JSON.stringify(word)}${didYouMean(word, COMPLETION_SHELLS)}\nusage: ${synopsis(program.name, def)}`,
        'shell',
      );
    }
    io.out(completionScript(shell, program.name, completionTree(program.commands)));
    return ExitCode.ok;
  } catch (err) {
    return report(err, 'completion');
  }
}

/** The commands as completion sees them: words, summaries and flags, from the definitions. */
export function completionTree(commands: readonly CommandDef[]): CompletionCommand[] {
  const entry = (c: CommandDef): CompletionCommand => ({
    name: commandWord(c),
    summary: c.summary,
    flags: (c.flags ?? []).map((f) => f.name),
    subcommands: (c.subcommands ?? []).map(entry),
  });
  return commands.map(entry);
}
