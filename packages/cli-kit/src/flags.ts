/**
 * The flags a command accepts: name to kind. `string` flags take a value, `strings` flags take a value
 * and may be repeated, `boolean` flags take none.
 */
export type FlagSpec = Readonly<Record<string, 'string' | 'strings' | 'boolean'>>;

/** The `node:util` `parseArgs` options for a {@link FlagSpec}. */
export type ParseArgsOptions = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** Anything carrying parsed flag values by name (each app's `ParsedArgs`). */
export interface FlagValues {
  /** Flag values by name. */
  readonly flags: Readonly<Record<string, string | string[] | boolean | undefined>>;
}

/** Turns a {@link FlagSpec} into `parseArgs` options (`strings` becomes a repeatable string). */
export function flagOptions(spec: FlagSpec): ParseArgsOptions {
  const options: ParseArgsOptions = {};
  for (const [name, kind] of Object.entries(spec)) {
    options[name] = kind === 'strings' ? { type: 'string', multiple: true } : { type: kind };
  }
  return options;
}

/** The value of a string flag, or undefined. */
export function stringFlag(args: FlagValues, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** The values of a repeatable flag (empty when not given). */
export function stringsFlag(args: FlagValues, name: string): string[] {
  const v = args.flags[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** True when a boolean flag was given. */
export function boolFlag(args: FlagValues, name: string): boolean {
  return args.flags[name] === true;
}
