import { ArgError } from './arg-error.js';
import type { CommandDef, FlagDef } from './command-def.js';
import { synopsis } from './help.js';
import { didYouMean } from './suggest.js';

/** A command line parsed by its {@link CommandDef}. */
export interface ParsedArgs {
  /** The positionals in order (after `--`, every word is one). */
  readonly positionals: readonly string[];
  /**
   * Each string flag's value: the one given (the last one when given more than once), else its
   * `default`, else undefined.
   */
  readonly strings: Readonly<Record<string, string | undefined>>;
  /** Every value of each `multiple` string flag, in order (empty when not given). */
  readonly lists: Readonly<Record<string, readonly string[]>>;
  /** Each boolean flag: true when given. */
  readonly booleans: Readonly<Record<string, boolean>>;
}

const isFlagLike = (word: string): boolean => word.startsWith('-') && word !== '-';

/**
 * Parses `args` (the words after the command's name) by `def`, strictly: `--name value`,
 * `--name=value`, `-x value` for a flag with a `short` form, booleans as `--name`; `--` ends the flags
 * (every later word is a positional, so is a lone `-`); a flag given twice keeps its last value unless
 * it is `multiple`. Anything else throws an {@link ArgError} (exit 2) naming the flag or argument, its
 * reason, and the synopsis: an unknown flag (with "did you mean"), a string flag without its value (a
 * next word that starts with `-` is not taken as a value: write `--name=-x`), a boolean given a value,
 * a required flag missing, too few or too many positionals. `program` starts the synopsis.
 */
export function parseArgv(program: string, def: CommandDef, args: readonly string[]): ParsedArgs {
  const flags = def.flags ?? [];
  const positionalDefs = def.positionals ?? [];
  const usage = `\nusage: ${synopsis(program, def)}`;
  const byName = new Map(flags.map((f) => [f.name, f]));
  const byShort = new Map(flags.flatMap((f) => (f.short === undefined ? [] : [[f.short, f] as const])));
  const strings: Record<string, string | undefined> = {};
  const lists: Record<string, string[]> = {};
  const booleans: Record<string, boolean> = {};
  for (const f of flags) {
    if (f.kind === 'boolean') booleans[f.name] = false;
    else {
      strings[f.name] = f.default;
      if (f.multiple === true) lists[f.name] = [];
    }
  }
  const given = new Set<string>();
  const positionals: string[] = [];
  const setString = (f: FlagDef, value: string): void => {
    strings[f.name] = value;
    lists[f.name]?.push(value);
    given.add(f.name);
  };
  const unknown = (name: string, token: string): ArgError =>
    new ArgError(
      'unknown_flag',
      `unknown flag ${token}${didYouMean(
        name,
        flags.map((f) => f.name),
      ).replace(/"([^"]+)"/g, '"--$1"')}${usage}`,
      name,
      token,
    );
  for (let i = 0; i < args.length; i++) {
    const word = args[i] ?? '';
    if (word === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!isFlagLike(word)) {
      positionals.push(word);
      continue;
    }
    const long = word.startsWith('--');
    const eq = long ? word.indexOf('=') : -1;
    let f: FlagDef | undefined;
    let inline: string | undefined;
    if (long) {
      const name = eq < 0 ? word.slice(2) : word.slice(2, eq);
      f = byName.get(name);
      if (f === undefined) throw unknown(name, word);
      if (eq >= 0) inline = word.slice(eq + 1);
    } else {
      f = byShort.get(word.charAt(1));
      if (f === undefined) throw unknown(word.slice(1), word);
      if (word.length > 2) inline = word.slice(2);
    }
    const label = long ? `--${f.name}` : `-${f.short ?? ''}`;
    if (f.kind === 'boolean') {
      if (inline !== undefined) {
        throw new ArgError(
          'unexpected_value',
          `${label} takes no value (got ${JSON.stringify(word)})${usage}`,
          f.name,
          word,
        );
      }
      booleans[f.name] = true;
      given.add(f.name);
      continue;
    }
    if (inline !== undefined) {
      setString(f, inline);
      continue;
    }
    const next = args[i + 1];
    if (next === undefined || isFlagLike(next)) {
      const hint = next === undefined ? '' : ` (a value that starts with a dash: --${f.name}=${next})`;
      throw new ArgError(
        'missing_value',
        `${label} needs a value ${f.value ?? '<value>'}${hint}${usage}`,
        f.name,
        word,
      );
    }
    setString(f, next);
    i++;
  }
  for (const f of flags) {
    if (f.required === true && !given.has(f.name)) {
      throw new ArgError('missing_flag', `--${f.name} ${f.value ?? '<value>'} is required${usage}`, f.name);
    }
  }
  checkPositionals(positionalDefs, positionals, usage);
  return { positionals, strings, lists, booleans };
}

function checkPositionals(
  defs: NonNullable<CommandDef['positionals']>,
  positionals: readonly string[],
  usage: string,
): void {
  const required = defs.filter((p) => p.optional !== true).length;
  const variadic = defs[defs.length - 1]?.variadic === true;
  if (positionals.length < required) {
    const missing = defs[positionals.length];
    const name = missing?.name ?? '';
    throw new ArgError('missing_argument', `missing <${name}>${usage}`, name);
  }
  if (!variadic && positionals.length > defs.length) {
    const extra = positionals[defs.length] ?? '';
    throw new ArgError(
      'unexpected_argument',
      `unexpected argument ${JSON.stringify(extra)}${usage}`,
      undefined,
      extra,
    );
  }
}

/**
 * The positional at `index` of a line {@link parseArgv} accepted, where the definition requires one
 * (a required positional is always there; asked for one that is not, it throws a `missing_argument`
 * {@link ArgError}).
 */
export function positional(parsed: ParsedArgs, index: number): string {
  const v = parsed.positionals[index];
  if (v === undefined) throw new ArgError('missing_argument', `missing argument ${index + 1}`, undefined);
  return v;
}

/**
 * The value of a string flag the definition marks `required` (or gives a `default`): always there in a
 * line {@link parseArgv} accepted; otherwise it throws a `missing_flag` {@link ArgError}.
 */
export function requiredString(parsed: ParsedArgs, name: string): string {
  const v = parsed.strings[name];
  if (v === undefined) throw new ArgError('missing_flag', `--${name} is required`, name);
  return v;
}
