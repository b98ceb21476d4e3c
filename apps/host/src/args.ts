import { parseArgs } from 'node:util';
import { usageError } from './cli-error.js';

/**
 * The flags a command accepts: name to kind. `string` flags take a value, `strings` flags take a value
 * and may be repeated, `boolean` flags take none.
 */
export type FlagSpec = Record<string, 'string' | 'strings' | 'boolean'>;

/** Parsed arguments: flag values by name, and positionals in order. */
export interface ParsedArgs {
  readonly flags: Readonly<Record<string, string | string[] | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses a command's arguments strictly: an unknown flag, a missing flag value or a positional is a
 * usage error that names the problem. `--json` is accepted by every command.
 */
export function parseCommandArgs(command: string, args: readonly string[], spec: FlagSpec): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {
    json: { type: 'boolean' },
  };
  for (const [name, kind] of Object.entries(spec)) {
    options[name] = kind === 'strings' ? { type: 'string', multiple: true } : { type: kind };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(`heddle-host ${command}: ${(err as Error).message}`);
  }
  if (parsed.positionals.length > 0) {
    throw usageError(
      `heddle-host ${command}: unexpected argument ${JSON.stringify(parsed.positionals[0])} (see heddle-host help)`,
    );
  }
  return { flags: parsed.values as ParsedArgs['flags'], positionals: parsed.positionals };
}

/** The value of a string flag, or undefined. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** The values of a repeatable flag (empty when not given). */
export function stringsFlag(args: ParsedArgs, name: string): string[] {
  const v = args.flags[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** True when a boolean flag was given. */
export function boolFlag(args: ParsedArgs, name: string): boolean {
  return args.flags[name] === true;
}
