import { parseArgs } from 'node:util';
import { type FlagSpec, flagOptions, stringFlag } from '@heddle/cli-kit';
import { badInput, usageError } from './cli-error.js';

export { boolFlag, type FlagSpec, stringFlag, stringsFlag } from '@heddle/cli-kit';

/** A command's argument shape: its usage line, flags and how many positionals it takes. */
export interface ArgSpec {
  /** The usage line shown with a usage error (`heddle-seed logs <id> [--lines N]`). */
  readonly usage: string;
  /** The command's own flags (`--home` and `--json` are accepted by every command). */
  readonly flags: FlagSpec;
  /** Names of the positionals, in order (all required unless `rest` is set). */
  readonly positionals: readonly string[];
  /** Accept any number of further positionals (`config set <id> k=v...`). */
  readonly rest?: boolean;
}

/** Parsed arguments. */
export interface ParsedArgs {
  readonly positionals: readonly string[];
  readonly flags: Readonly<Record<string, string | string[] | boolean | undefined>>;
  readonly json: boolean;
  readonly home: string | undefined;
}

/**
 * Parses a command's arguments strictly: an unknown flag, a missing flag value or a wrong number of
 * positionals is a usage error (exit 2) that names the problem and shows the usage line.
 */
export function parseCommandArgs(args: readonly string[], spec: ArgSpec): ParsedArgs {
  const options = flagOptions({ json: 'boolean', home: 'string', ...spec.flags });
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(`${(err as Error).message}\nusage: ${spec.usage}`);
  }
  const n = parsed.positionals.length;
  if (n < spec.positionals.length) {
    const missing = spec.positionals[n] ?? '';
    throw usageError(`missing <${missing}>\nusage: ${spec.usage}`, missing);
  }
  if (n > spec.positionals.length && spec.rest !== true) {
    const extra = parsed.positionals[spec.positionals.length];
    throw usageError(`unexpected argument ${JSON.stringify(extra)}\nusage: ${spec.usage}`);
  }
  const values = parsed.values as ParsedArgs['flags'];
  return {
    positionals: parsed.positionals,
    flags: values,
    json: values.json === true,
    home: typeof values.home === 'string' ? values.home : undefined,
  };
}

/** An integer flag in `min..max`, `fallback` when absent; otherwise refused (exit 3) naming the flag. */
export function intFlag(args: ParsedArgs, name: string, min: number, max: number, fallback: number): number {
  const v = stringFlag(args, name);
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
