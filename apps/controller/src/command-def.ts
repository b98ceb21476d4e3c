import { parseArgs } from 'node:util';
import { CliError, ExitCode, usageError } from './cli-error.js';

/** One flag of a command, as parsed and as documented in the CLI reference. */
export interface FlagDef {
  /** The flag without dashes (`grace-ms`). */
  readonly name: string;
  /** `string` flags take a value, `boolean` flags do not. */
  readonly kind: 'string' | 'boolean';
  /** The value's placeholder in the synopsis (`N`, `<id>`). */
  readonly value?: string;
  /** May be given more than once (the values are collected in order). */
  readonly multiple?: boolean;
  /** The command refuses to run without it (shown without brackets in the synopsis). */
  readonly required?: boolean;
  /** What it does, for the reference. */
  readonly description: string;
}

/** One positional argument of a command. */
export interface PositionalDef {
  readonly name: string;
  readonly description: string;
}

/**
 * A command's definition: what it parses and what the CLI reference (docs/cli-reference.md) says about
 * it, from one source.
 */
export interface CommandDef {
  /** The words after `heddle` (`node add`). */
  readonly name: string;
  /** One line: what it does. */
  readonly summary: string;
  /** More, for the reference (paragraphs separated by blank lines). */
  readonly description: string;
  readonly positionals: readonly PositionalDef[];
  readonly flags: readonly FlagDef[];
  /** What `--json` prints on success. */
  readonly json: string;
  /** Exit codes this command returns, code to meaning. */
  readonly exits: Readonly<Record<number, string>>;
}

/** Flags every operator command accepts. */
export const COMMON_FLAGS: readonly FlagDef[] = [
  {
    name: 'home',
    kind: 'string',
    value: '<dir>',
    description: 'the controller home (default: $HEDDLE_HOME, else ~/.heddle)',
  },
  {
    name: 'json',
    kind: 'boolean',
    description:
      'print the API answer as one line of JSON; errors as {"error":{code,message,field,reasons}} on stderr',
  },
];

/** The one-line synopsis of a command: `heddle node rm <id> [--force] [--home <dir>] [--json]`. */
export function synopsis(def: CommandDef): string {
  const parts = [`heddle ${def.name}`, ...def.positionals.map((p) => `<${p.name}>`)];
  for (const f of [...def.flags, ...COMMON_FLAGS]) {
    const v = f.kind === 'string' ? ` ${f.value ?? '<value>'}` : '';
    const flag = `--${f.name}${v}`;
    parts.push(`${f.required === true ? flag : `[${flag}]`}${f.multiple === true ? '...' : ''}`);
  }
  return parts.join(' ');
}

/** Parsed arguments of an operator command. */
export interface Parsed {
  /** Positionals in order, exactly as many as the definition names. */
  readonly positionals: readonly string[];
  /** String flags given (a `multiple` flag: its last value; see {@link Parsed.lists}). */
  readonly strings: Readonly<Record<string, string | undefined>>;
  /** Boolean flags given. */
  readonly booleans: Readonly<Record<string, boolean>>;
  /** Every value of each `multiple` flag, in order (empty when not given). */
  readonly lists: Readonly<Record<string, readonly string[]>>;
  /** `--json` was given. */
  readonly json: boolean;
  /** `--home`, when given. */
  readonly home: string | undefined;
}

/**
 * Parses `args` by `def` strictly: an unknown flag, a flag without its value or a wrong number of
 * positionals is a usage error (exit 2) naming it and showing the synopsis.
 */
export function parseCommand(def: CommandDef, args: readonly string[]): Parsed {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const f of [...def.flags, ...COMMON_FLAGS]) {
    options[f.name] = { type: f.kind, ...(f.multiple === true ? { multiple: true } : {}) };
  }
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (err) {
    const m = /'(--?[^' ]+)/.exec((err as Error).message);
    throw usageError(`${(err as Error).message}\nusage: ${synopsis(def)}`, m?.[1]?.replace(/^-+/, ''));
  }
  if (parsed.positionals.length !== def.positionals.length) {
    const missing = def.positionals[parsed.positionals.length];
    const what =
      missing === undefined
        ? `unexpected argument ${JSON.stringify(parsed.positionals[def.positionals.length])}`
        : `missing <${missing.name}>`;
    throw usageError(`${what}\nusage: ${synopsis(def)}`, missing?.name);
  }
  const strings: Record<string, string | undefined> = {};
  const booleans: Record<string, boolean> = {};
  const lists: Record<string, string[]> = {};
  for (const f of [...def.flags, ...COMMON_FLAGS]) {
    const v = parsed.values[f.name];
    if (f.kind === 'boolean') booleans[f.name] = v === true;
    else if (f.multiple === true) {
      const all = Array.isArray(v) ? (v as string[]) : [];
      lists[f.name] = all;
      strings[f.name] = all[all.length - 1];
    } else strings[f.name] = typeof v === 'string' ? v : undefined;
  }
  return {
    positionals: parsed.positionals,
    strings,
    booleans,
    lists,
    json: booleans.json === true,
    home: strings.home,
  };
}

/** A flag value that does not fit (exit 3), naming the field. */
export function badValue(field: string, message: string): CliError {
  return new CliError('invalid_input', message, ExitCode.badInput, { field });
}

/**
 * An integer flag value in `min..max`; `undefined` when absent; otherwise refused (exit 3) naming
 * the flag.
 */
export function intFlag(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw badValue(name, `--${name}: ${JSON.stringify(value)} is not a whole number in ${min}..${max}`);
  }
  return n;
}

/** A value of a closed set; otherwise refused (exit 3) naming the flag and the choices. */
export function choiceFlag<T extends string>(name: string, value: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw badValue(name, `--${name}: ${JSON.stringify(value)} is not one of ${choices.join(', ')}`);
}

/** The `--help` text of a command: synopsis, summary, arguments and flags. */
export function commandHelp(def: CommandDef): string[] {
  const flags = [...def.flags, ...COMMON_FLAGS];
  const label = (f: FlagDef): string => `--${f.name}${f.kind === 'string' ? ` ${f.value ?? '<value>'}` : ''}`;
  const width = Math.max(
    0,
    ...flags.map((f) => label(f).length),
    ...def.positionals.map((p) => p.name.length + 2),
  );
  return [
    `usage: ${synopsis(def)}`,
    '',
    def.summary,
    '',
    ...def.positionals.map((p) => `  ${`<${p.name}>`.padEnd(width)}  ${p.description}`),
    ...flags.map(
      (f) => `  ${label(f).padEnd(width)}  ${f.description}${f.multiple === true ? ' (repeatable)' : ''}`,
    ),
    '',
    `exit codes: ${Object.entries(def.exits)
      .map(([c, m]) => `${c} ${m.split(' (')[0]}`)
      .join(', ')}`,
  ];
}
