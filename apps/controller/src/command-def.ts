import type { CommandDef, FlagDef, PositionalDef } from '@heddle/cli-kit';
import { CliError, ExitCode } from './cli-error.js';

/**
 * An operator command's definition (one that talks to the controller daemon): the shared
 * `CommandDef` of `@heddle/cli-kit`, with what the CLI reference (docs/cli-reference.md) also says.
 */
export interface OperatorCommandDef extends CommandDef {
  /** More, for the reference (paragraphs separated by blank lines). */
  readonly description: string;
  readonly positionals: readonly PositionalDef[];
  /** Every flag it takes, the {@link COMMON_FLAGS} last. */
  readonly flags: readonly FlagDef[];
  /** What `--json` prints on success. */
  readonly json: string;
  /** Exit codes this command returns, code to meaning. */
  readonly exits: Readonly<Record<number, string>>;
}

/** A group of operator commands (`node`): its subcommands only. */
export interface OperatorGroupDef extends CommandDef {
  readonly subcommands: readonly OperatorCommandDef[];
}

/** `--json`, as every command of `heddle` takes it. */
export const JSON_FLAG: FlagDef = {
  name: 'json',
  kind: 'boolean',
  description: 'print the result as one line of JSON; errors as {"error":{code,message,field}} on stderr',
};

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

/** An operator command's definition with the {@link COMMON_FLAGS} added after its own. */
export function operatorDef(def: OperatorCommandDef): OperatorCommandDef {
  return { ...def, flags: [...def.flags, ...COMMON_FLAGS] };
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
  const found = choices.find((c) => c === value);
  if (found !== undefined) return found;
  throw badValue(name, `--${name}: ${JSON.stringify(value)} is not one of ${choices.join(', ')}`);
}
