import { parseArgs } from 'node:util';
import { type FlagSpec, flagOptions, usageError } from '@heddle/cli-kit';

export { boolFlag, type FlagSpec, stringFlag, stringsFlag } from '@heddle/cli-kit';

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
  const options = flagOptions({ json: 'boolean', ...spec });
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
