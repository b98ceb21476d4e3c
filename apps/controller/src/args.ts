import { parseArgs } from 'node:util';
import { usageError } from './cli-error.js';

/** The flags a command accepts: name to kind. `string` flags take a value, `boolean` flags do not. */
export type FlagSpec = Record<string, 'string' | 'boolean'>;

/** Parsed arguments: flag values by name, and positionals in order. */
export interface ParsedArgs {
  readonly flags: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses a command's arguments strictly: an unknown flag, a missing flag value or a wrong number of
 * positionals is a usage error that names the problem. `--json` is accepted by every command.
 */
export function parseCommandArgs(
  command: string,
  args: readonly string[],
  spec: FlagSpec,
  positionals: { min: number; max: number; names: string },
): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean' }> = { json: { type: 'boolean' } };
  for (const [name, type] of Object.entries(spec)) options[name] = { type };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(`heddle ${command}: ${(err as Error).message}`);
  }
  const pos = parsed.positionals;
  if (pos.length < positionals.min || pos.length > positionals.max) {
    throw usageError(`usage: heddle ${command} ${positionals.names}`.trimEnd());
  }
  return { flags: parsed.values as ParsedArgs['flags'], positionals: pos };
}
