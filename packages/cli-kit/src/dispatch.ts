import { type CliError, ExitCode, usageError } from './cli-error.js';
import {
  COMPLETION_SHELLS,
  type CompletionCommand,
  type CompletionShell,
  completionScript,
} from './completion.js';
import { type ErrorSink, reportCliError } from './report-error.js';
import { didYouMean } from './suggest.js';

/** Where a CLI writes: standard output and standard error, a line at a time. */
export interface LineSink extends ErrorSink {
  /** Writes a line to standard output. */
  out(line: string): void;
}

/** A subcommand of a command (`node add`), as help, "did you mean" and completion see it. */
export interface SubcommandEntry {
  /** One line: what it does. */
  readonly summary: string;
  /** Other words that run it (`list` for `ls`). */
  readonly aliases?: readonly string[];
  /** Its flags without dashes (for completion). */
  readonly flags?: readonly string[];
}

/** What {@link dispatchCli} knows of a command. */
export interface CommandEntry {
  /** One line: what it does (the top-level help lists it). */
  readonly summary: string;
  /**
   * Its subcommands by word, when it has any. A first argument that is neither one of them, an alias
   * nor a flag is then refused (exit 2, with "did you mean") before the command runs, and
   * `<command> --help` lists them.
   */
  readonly subcommands?: Readonly<Record<string, SubcommandEntry>>;
  /** Its flags without dashes (for completion). */
  readonly flags?: readonly string[];
}

/** How {@link dispatchCli} runs a program's commands. */
export interface DispatchOptions<C extends CommandEntry, Io extends LineSink> {
  /** The program name (`heddle`, `heddle-host`, `heddle-seed`): it starts every error line. */
  readonly prefix: string;
  /** The program's version, printed by `--version` and `version`. */
  readonly version: string;
  /** The commands by name. */
  readonly commands: Readonly<Record<string, C>>;
  /** The top-level help (printed for no command, `help`, `--help`, `-h`, and after an unknown one). */
  readonly helpText: () => string;
  /**
   * What `<command> [<subcommand>] --help` (and `help <command> [<subcommand>]`) prints, or undefined
   * when the command answers `--help` itself (it then runs with the flag). For a command with
   * subcommands asked without one, undefined prints the generated list of its subcommands.
   */
  readonly commandHelp: (name: string, command: C, subcommand?: string) => string | undefined;
  /** Runs a command with its arguments. */
  readonly run: (command: C, args: readonly string[], io: Io) => number | Promise<number>;
  /** Maps what a command threw to a `CliError` (default: `toCliError`). */
  readonly toCliError?: (err: unknown) => CliError;
  /**
   * More flags for completion, by command path (`place`, `node add`), added to each entry's own
   * `flags`; a two-word path whose subcommand is not declared adds it. Called only when a completion
   * script is asked for, so it may load the command definitions.
   */
  readonly completionFlags?: () =>
    | Readonly<Record<string, readonly string[]>>
    | Promise<Readonly<Record<string, readonly string[]>>>;
}

const isHelp = (a: string): boolean => a === '--help' || a === '-h';

/**
 * The top of a `runCli`, with the conventions of kubectl and nomad: no command prints the help (exit
 * 2); `help`, `--help` and `-h` print it (exit 0); `--version` and `version` print `<prefix>
 * <version>` (with `--json`: `{"name","version"}`); `help <command> [<subcommand>]` is `<command>
 * [<subcommand>] --help`, which always exits 0; `completion bash|zsh` prints a completion script
 * generated from the commands; an unknown command or subcommand is refused (exit 2) with "did you
 * mean"; anything a command throws is reported by {@link reportCliError} (`--json` anywhere among its
 * arguments selects the JSON form). Never throws.
 */
export async function dispatchCli<C extends CommandEntry, Io extends LineSink>(
  argv: readonly string[],
  io: Io,
  options: DispatchOptions<C, Io>,
): Promise<number> {
  const [name, ...rest] = argv;
  const json = rest.includes('--json');
  if (name === undefined || name === 'help' || isHelp(name)) {
    const asked = name === 'help' ? rest.filter((a) => !a.startsWith('-')) : [];
    if (asked.length > 0) return dispatchCli([...asked.slice(0, 2), '--help'], io, options);
    io.out(options.helpText());
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === '--version' || name === 'version') {
    io.out(
      json
        ? JSON.stringify({ name: options.prefix, version: options.version })
        : `${options.prefix} ${options.version}`,
    );
    return ExitCode.ok;
  }
  const report = (err: unknown, what: string): number =>
    reportCliError(err, {
      name: what,
      json,
      io,
      prefix: options.prefix,
      ...(options.toCliError === undefined ? {} : { toCliError: options.toCliError }),
    });
  if (name === 'completion') return completion(rest, io, options, report);
  const command = Object.hasOwn(options.commands, name) ? options.commands[name] : undefined;
  if (command === undefined) {
    const hint = didYouMean(name, [...Object.keys(options.commands), 'help', 'version', 'completion']);
    io.err(`${options.prefix}: unknown command ${JSON.stringify(name)}${hint}\n\n${options.helpText()}`);
    return ExitCode.usage;
  }
  const wantsHelp = rest.some(isHelp);
  const subs = command.subcommands;
  const [first] = rest;
  if (subs !== undefined && first !== undefined && !first.startsWith('-')) {
    const sub = resolveSubcommand(subs, first);
    if (sub === undefined) {
      const words = Object.keys(subs);
      return report(
        usageError(
          `unknown subcommand ${JSON.stringify(first)}${didYouMean(first, [...words, ...words.flatMap((w) => subs[w]?.aliases ?? [])])}\nusage: ${options.prefix} ${name} <${words.join('|')}> ... (${options.prefix} ${name} --help lists them)`,
        ),
        name,
      );
    }
    if (wantsHelp) {
      const help = options.commandHelp(name, command, sub);
      if (help !== undefined) {
        io.out(help);
        return ExitCode.ok;
      }
    }
  } else if (wantsHelp) {
    const help =
      options.commandHelp(name, command) ??
      (subs === undefined ? undefined : groupHelp(options.prefix, name, command, subs));
    if (help !== undefined) {
      io.out(help);
      return ExitCode.ok;
    }
  }
  try {
    return await options.run(command, rest, io);
  } catch (err) {
    return report(err, name);
  }
}

/** The subcommand `word` names (itself or by an alias), or undefined. */
function resolveSubcommand(
  subs: Readonly<Record<string, SubcommandEntry>>,
  word: string,
): string | undefined {
  if (Object.hasOwn(subs, word)) return word;
  return Object.keys(subs).find((s) => subs[s]?.aliases?.includes(word) === true);
}

/** `<command> --help` of a command with subcommands: its summary and its subcommands. */
function groupHelp(
  prefix: string,
  name: string,
  command: CommandEntry,
  subs: Readonly<Record<string, SubcommandEntry>>,
): string {
  const words = Object.keys(subs);
  const width = Math.max(...words.map((w) => w.length));
  return [
    `usage: ${prefix} ${name} <${words.join('|')}> [arguments]`,
    '',
    command.summary,
    '',
    'subcommands:',
    ...words.map((w) => {
      const s = subs[w] as SubcommandEntry;
      const aka = s.aliases?.length ? ` (also: ${s.aliases.join(', ')})` : '';
      return `  ${w.padEnd(width)}  ${s.summary}${aka}`;
    }),
    '',
    `${prefix} help ${name} <subcommand> (or ${prefix} ${name} <subcommand> --help) shows one`,
  ].join('\n');
}

/** `completion bash|zsh`: prints the script, built from the commands and `completionFlags`. */
async function completion<C extends CommandEntry, Io extends LineSink>(
  args: readonly string[],
  io: Io,
  options: DispatchOptions<C, Io>,
  report: (err: unknown, what: string) => number,
): Promise<number> {
  const usage = `usage: ${options.prefix} completion <${COMPLETION_SHELLS.join('|')}>`;
  if (args.some(isHelp)) {
    io.out(
      [
        usage,
        '',
        'print a completion script for bash or zsh, generated from the commands',
        '',
        `  bash: source <(${options.prefix} completion bash), or save it in /etc/bash_completion.d/${options.prefix}`,
        `  zsh:  source <(${options.prefix} completion zsh) after compinit, or save it as _${options.prefix.replace(/-/g, '_')} on $fpath`,
      ].join('\n'),
    );
    return ExitCode.ok;
  }
  const shell = args.filter((a) => !a.startsWith('-'));
  if (shell.length !== 1 || !(COMPLETION_SHELLS as readonly string[]).includes(shell[0] as string)) {
    const hint = shell[0] === undefined ? '' : didYouMean(shell[0], COMPLETION_SHELLS);
    const what =
      shell[0] === undefined ? 'missing <shell>' : `unknown shell ${JSON.stringify(shell[0])}${hint}`;
    return report(usageError(`${what}\n${usage}`, 'shell'), 'completion');
  }
  try {
    const extra = (await options.completionFlags?.()) ?? {};
    io.out(
      completionScript(shell[0] as CompletionShell, options.prefix, completionTree(options.commands, extra)),
    );
    return ExitCode.ok;
  } catch (err) {
    return report(err, 'completion');
  }
}

/** The commands as completion sees them: entries, their subcommands and flags, plus `extra` flags. */
function completionTree(
  commands: Readonly<Record<string, CommandEntry>>,
  extra: Readonly<Record<string, readonly string[]>>,
): CompletionCommand[] {
  return Object.entries(commands).map(([name, c]) => {
    const subs = new Map<string, CompletionCommand>();
    for (const [word, s] of Object.entries(c.subcommands ?? {})) {
      subs.set(word, {
        name: word,
        summary: s.summary,
        flags: [...(s.flags ?? []), ...(extra[`${name} ${word}`] ?? [])],
        subcommands: [],
      });
    }
    for (const [path, flags] of Object.entries(extra)) {
      const [head, word, more] = path.split(' ');
      if (head === name && word !== undefined && more === undefined && !subs.has(word)) {
        subs.set(word, { name: word, summary: `${name} ${word}`, flags, subcommands: [] });
      }
    }
    return {
      name,
      summary: c.summary,
      flags: [...new Set([...(c.flags ?? []), ...(extra[name] ?? [])])],
      subcommands: [...subs.values()],
    };
  });
}
