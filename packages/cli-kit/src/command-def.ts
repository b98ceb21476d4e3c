/** One flag of a command: how it parses and what its help says. */
export interface FlagDef {
  /** The flag without dashes (`grace-ms`): lower-case letters, digits and dashes. */
  readonly name: string;
  /** `string` flags take a value (`--tier paired`, `--tier=paired`), `boolean` flags take none. */
  readonly kind: 'string' | 'boolean';
  /** The value's placeholder in the synopsis and the help (`N`, `<id>`); default `<value>`. */
  readonly value?: string;
  /** A one-letter short form (`o` for `-o <dir>`). */
  readonly short?: string;
  /** May be given more than once (the values are collected in order). */
  readonly multiple?: boolean;
  /** The command refuses to run without it (shown without brackets in the synopsis). */
  readonly required?: boolean;
  /** The value a `string` flag has when it is not given (the help shows it). */
  readonly default?: string;
  /** What it does (one line for the help). */
  readonly description: string;
}

/** One positional argument of a command. */
export interface PositionalDef {
  /** Its name, shown as `<name>` (`[name]` when optional, `<name>...` when variadic). */
  readonly name: string;
  /** What it is (one line for the help). */
  readonly description: string;
  /** May be left out (only positionals after the required ones may be). */
  readonly optional?: boolean;
  /** Takes every further positional (the last one only); required unless `optional`. */
  readonly variadic?: boolean;
}

/**
 * A command's definition, the one source of what it parses, what its `--help` says, what completion
 * offers and what a generated reference documents.
 */
export interface CommandDef {
  /** The words after the program name (`node add`); the last word is what the operator types. */
  readonly name: string;
  /** One line: what it does. */
  readonly summary: string;
  /** More, for a generated reference (paragraphs separated by blank lines); the help leaves it out. */
  readonly description?: string;
  /** Its positional arguments, in order. Absent on a group that only holds subcommands. */
  readonly positionals?: readonly PositionalDef[];
  /** Its flags (every one it accepts, `--json` included). Absent on a group of subcommands only. */
  readonly flags?: readonly FlagDef[];
  /** Command lines that show its use (without the program name), for the help. */
  readonly examples?: readonly string[];
  /** Other words that run it (`list` for `ls`). */
  readonly aliases?: readonly string[];
  /** Its subcommands (one level), whose names start with this command's name. */
  readonly subcommands?: readonly CommandDef[];
  /** Its exit codes, code to meaning, when they differ from the program's. */
  readonly exits?: Readonly<Record<number, string>>;
}

/** The word that runs a command: the last word of its name. */
export function commandWord(def: CommandDef): string {
  return def.name.slice(def.name.lastIndexOf(' ') + 1);
}

/** The subcommand of `def` that `word` names (itself or by an alias), or undefined. */
export function findSubcommand(def: CommandDef, word: string): CommandDef | undefined {
  const subs = def.subcommands ?? [];
  return subs.find((s) => commandWord(s) === word) ?? subs.find((s) => s.aliases?.includes(word) === true);
}

/** True when a command runs by itself (it declares flags or positionals), not only its subcommands. */
export function isRunnable(def: CommandDef): boolean {
  return def.flags !== undefined || def.positionals !== undefined;
}
