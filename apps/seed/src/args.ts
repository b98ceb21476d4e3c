import { type CommandDef, type ParsedArgs, parseArgv } from '@heddle/cli-kit';
import { badInput } from './cli-error.js';

/** A `heddle-seed` command line parsed by its definition, with `--json` and `--home` read out. */
export interface SeedArgs extends ParsedArgs {
  /** `--json` was given. */
  readonly json: boolean;
  /** `--home`, when given. */
  readonly home: string | undefined;
}

/**
 * Parses a command's arguments by its definition (`command-defs.ts`) with the one parser of
 * `@heddle/cli-kit`: an unknown flag, a missing flag value or a wrong number of positionals is a
 * usage error (exit 2) that names the flag or argument and shows the synopsis.
 */
export function parseSeedArgs(def: CommandDef, args: readonly string[]): SeedArgs {
  const parsed = parseArgv('heddle-seed', def, args);
  return { ...parsed, json: parsed.booleans.json === true, home: parsed.strings.home };
}

/** An integer flag in `min..max`, `fallback` when absent; otherwise refused (exit 3) naming the flag. */
export function intFlag(args: ParsedArgs, name: string, min: number, max: number, fallback: number): number {
  const v = args.strings[name];
  if (v === undefined) return fallback;
  const n = /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw badInput(
      'invalid_argument',
      `--${name}: ${JSON.stringify(v)} is not a whole number in ${min}..${max}`,
      name,
    );
  }
  return n;
}

/** A cog id as the Seed's store names it (`[a-z0-9][a-z0-9._-]{0,63}`); otherwise refused (exit 3). */
export const COG_ID_RE: RegExp = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Checks a cog id argument; refused with `invalid_argument` (exit 3) naming `field`. */
export function cogId(value: string, field = 'id'): string {
  if (!COG_ID_RE.test(value)) {
    throw badInput(
      'invalid_argument',
      `${field}: ${JSON.stringify(value)} is not a cog id ([a-z0-9][a-z0-9._-]{0,63})`,
      field,
    );
  }
  return value;
}

/** Splits `<id>@<version>`; refused with `invalid_argument` (exit 3) when it is not that shape. */
export function cogRef(value: string, field = 'cog'): { id: string; version: string } {
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) {
    throw badInput(
      'invalid_argument',
      `${field}: expected <id>@<version>, got ${JSON.stringify(value)}`,
      field,
    );
  }
  return { id: cogId(value.slice(0, at), field), version: value.slice(at + 1) };
}

/**
 * Parses `k=v` pairs into a flat config: `true`/`false`/`null` and numbers become JSON values, the
 * rest stays text. Refused (exit 3) for a pair without `=` or an empty key.
 */
export function keyValuePairs(
  pairs: readonly string[],
  field: string,
): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0)
      throw badInput('invalid_argument', `${field}: expected key=value, got ${JSON.stringify(p)}`, field);
    const k = p.slice(0, eq);
    const raw = p.slice(eq + 1);
    out[k] =
      raw === 'true'
        ? true
        : raw === 'false'
          ? false
          : raw === 'null'
            ? null
            : /^-?\d+(\.\d+)?$/.test(raw)
              ? Number(raw)
              : raw;
  }
  return out;
}
