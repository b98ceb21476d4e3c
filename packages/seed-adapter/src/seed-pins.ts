import { readFile } from 'node:fs/promises';
import { COG_ID_RE, CogVersionSchema, type StorePin } from '@heddle/package';
import { RuntimeError, type RuntimeWorkload, workloadFromStorePin } from '@heddle/runtime';
import { z } from 'zod';

/** The registry name of a Cognitum Seed's app store in store pins and workload refs (`cognitum-seed/<id>@<version>`). */
export const SEED_REGISTRY = 'cognitum-seed';

/** The most pins one file may hold, and the most console commands one pin may list. */
export const SEED_PIN_LIMITS: { readonly maxPins: 256; readonly maxConsoleCommands: 64 } = {
  maxPins: 256,
  maxConsoleCommands: 64,
};

/**
 * The operator's pin of one Seed store cog: only this id at exactly this version (and, when given,
 * exactly this SHA-256 as the store publishes it) may install, and a console run may send only the
 * listed commands.
 */
export interface SeedPin {
  readonly id: string;
  readonly version: string;
  /** SHA-256 of the store's artifact (64 lower-case hex), when the operator pins the content too. */
  readonly sha256?: string | undefined;
  /** The only console commands a console run of this cog may send (exact strings). */
  readonly console_commands: readonly string[];
}

const consoleCommand = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, 'expected printable ASCII words separated by single spaces');

/** Schema of one {@link SeedPin} (unknown fields refused). */
export const SeedPinSchema: z.ZodType<SeedPin> = z.strictObject({
  id: z.string().regex(COG_ID_RE, 'expected an id matching [a-z0-9][a-z0-9._-]{0,63}'),
  version: CogVersionSchema,
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters')
    .optional(),
  console_commands: z.array(consoleCommand).max(SEED_PIN_LIMITS.maxConsoleCommands).default([]),
});

function issueOf(error: z.ZodError, prefix: string): { field: string; message: string } {
  const issue = error.issues[0];
  const path = issue === undefined ? [] : issue.path.map(String);
  const field = [prefix, ...path].filter((s) => s !== '').join('.');
  return { field: field || 'pins', message: `${field || 'pins'}: ${issue?.message ?? 'invalid'}` };
}

/**
 * Parses the operator's Seed pins: an array of pins, or an object `{pins: [...]}` (the pins file).
 * Refuses with `RuntimeError` code `invalid_config` naming the field: a malformed pin, more than
 * {@link SEED_PIN_LIMITS} allow, or a cog pinned twice (one version per cog: the Seed holds one).
 */
export function parseSeedPins(value: unknown): SeedPin[] {
  const list =
    typeof value === 'object' && value !== null && !Array.isArray(value) && 'pins' in value
      ? // cast: the typeof/in check above said it is an object with pins
        (value as { pins: unknown }).pins
      : value;
  if (!Array.isArray(list)) {
    throw new RuntimeError('invalid_config', 'pins: expected an array of pins', { field: 'pins' });
  }
  if (list.length > SEED_PIN_LIMITS.maxPins) {
    throw new RuntimeError('invalid_config', `pins: at most ${SEED_PIN_LIMITS.maxPins} pins`, {
      field: 'pins',
    });
  }
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const r = SeedPinSchema.safeParse(raw);
    if (!r.success) {
      const { field, message } = issueOf(r.error, `pins[${i}]`);
      throw new RuntimeError('invalid_config', message, { field });
    }
    if (seen.has(r.data.id)) {
      throw new RuntimeError('invalid_config', `pins[${i}].id: ${r.data.id} is pinned twice`, {
        field: `pins[${i}].id`,
      });
    }
    seen.add(r.data.id);
    return r.data;
  });
}

/**
 * Reads and parses a pins file (JSON: an array of pins or `{pins: [...]}`, at most 1 MiB). Refuses
 * with `invalid_config` (field `pins`) a file that cannot be read or is not JSON.
 */
export async function readSeedPinsFile(path: string): Promise<SeedPin[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    // cast: fs errors carry an errno code
    const code = (err as { code?: unknown }).code;
    throw new RuntimeError('invalid_config', `pins: cannot read the pins file (${String(code ?? 'error')})`, {
      field: 'pins',
    });
  }
  if (text.length > 1024 * 1024) {
    throw new RuntimeError('invalid_config', 'pins: the pins file is larger than 1 MiB', { field: 'pins' });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RuntimeError('invalid_config', 'pins: the pins file is not JSON', { field: 'pins' });
  }
  return parseSeedPins(json);
}

/** The store pin (registry {@link SEED_REGISTRY}) of an operator's Seed pin. */
export function seedStorePin(pin: SeedPin): StorePin {
  return {
    registry: SEED_REGISTRY,
    id: pin.id,
    version: pin.version,
    ...(pin.sha256 === undefined ? {} : { sha256: pin.sha256 }),
  };
}

/** The runtime workload of an operator's Seed pin (with its console commands), for a WorkloadHost. */
export function seedPinWorkload(pin: SeedPin): RuntimeWorkload {
  return workloadFromStorePin(seedStorePin(pin), pin.console_commands);
}
