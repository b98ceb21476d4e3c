import { z } from 'zod';
import { SEED_TOKEN_RE } from './credentials.js';
import type {
  CogConfig,
  CogLogs,
  ConsoleResult,
  InstalledCog,
  PairStatus,
  SeedIdentity,
  SeedStatus,
  StoreCog,
} from './seed-api.js';

/** A cog id as the client accepts it (lower-case, 1-64 characters; safe in a URL path). */
export const COG_ID_RE: RegExp = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** At most this many extra (undocumented) fields of status/identity are kept. */
export const MAX_EXTRA_FIELDS = 32;
/** An extra field is kept only if its JSON is at most this long. */
export const MAX_EXTRA_JSON = 1024;
/** The Seed's `{error}` message is cut to this many characters. */
export const MAX_SEED_MESSAGE = 512;

const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const text = (max: number) => z.string().min(1).max(max);
const version = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[\x21-\x7e]+$/, 'expected printable ASCII without spaces');
const cogId = z.string().regex(COG_ID_RE, 'expected a cog id ([a-z0-9][a-z0-9._-]{0,63})');
const count = z.number().int().nonnegative();
const lines = z.array(z.string().max(65_536)).max(100_000);

/** Keeps the first {@link MAX_EXTRA_FIELDS} undocumented fields whose JSON is small; drops the rest. */
function boundedExtras(value: Record<string, unknown>, known: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const [key, v] of Object.entries(value)) {
    if (known.includes(key) || RESERVED_KEYS.has(key) || key.length > 64) continue;
    if (kept >= MAX_EXTRA_FIELDS) break;
    const json = JSON.stringify(v);
    if (json === undefined || json.length > MAX_EXTRA_JSON) continue;
    out[key] = v;
    kept++;
  }
  return out;
}

/** `GET /api/v1/status`: `firmware` and `uptime_secs`, plus bounded extra fields. */
export const SeedStatusSchema: z.ZodType<SeedStatus> = z
  .looseObject({ firmware: text(128), uptime_secs: z.number().nonnegative() })
  .transform((v) => ({
    ...boundedExtras(v, ['firmware', 'uptime_secs']),
    firmware: v.firmware,
    uptime_secs: v.uptime_secs,
  }));

/** `GET /api/v1/identity`: `device_id` and `model`, plus bounded extra fields. */
export const SeedIdentitySchema: z.ZodType<SeedIdentity> = z
  .looseObject({ device_id: text(128), model: text(128) })
  .transform((v) => ({
    ...boundedExtras(v, ['device_id', 'model']),
    device_id: v.device_id,
    model: v.model,
  }));

/** `GET /api/v1/pair/status` and `POST /api/v1/pair/window` (extra fields dropped). */
export const PairStatusSchema: z.ZodType<PairStatus> = z.object({
  window_open: z.boolean(),
  window_secs_left: z.number().nonnegative(),
  paired_clients: count,
});

/** `POST /api/v1/pair` -> `{token}` (a well-formed bearer token). */
export const PairAnswerSchema: z.ZodType<{ token: string }> = z.object({
  token: z.string().regex(SEED_TOKEN_RE, 'expected a bearer token'),
});

/** One store cog. The sha256 is normalized to lower case. */
export const StoreCogSchema: z.ZodType<StoreCog> = z
  .object({
    id: cogId,
    version,
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'expected 64 hex digits')
      .transform((s) => s.toLowerCase())
      .optional(),
    size: count.optional(),
  })
  .transform(({ id, version: v, sha256, size }) => ({
    id,
    version: v,
    ...(sha256 === undefined ? {} : { sha256 }),
    ...(size === undefined ? {} : { size }),
  }));

/** `GET /api/v1/apps/available` -> `{cogs: [...]}`. */
export const StoreListSchema: z.ZodType<{ cogs: StoreCog[] }> = z.object({
  cogs: z.array(StoreCogSchema).max(4096),
});

/** One installed cog. */
export const InstalledCogSchema: z.ZodType<InstalledCog> = z.object({
  id: cogId,
  version,
  running: z.boolean(),
  pid: count.nullable().optional(),
});

/** `GET /api/v1/apps` -> `{installed: [...]}`. */
export const InstalledListSchema: z.ZodType<{ installed: InstalledCog[] }> = z.object({
  installed: z.array(InstalledCogSchema).max(4096),
});

/** `GET /api/v1/apps/{id}/logs` -> `{output: [...], errors: [...]}`. */
export const CogLogsSchema: z.ZodType<CogLogs> = z.object({ output: lines, errors: lines });

/** Console output: an array of lines, or one text that is split into lines. */
const consoleLines = z.union([
  lines,
  z
    .string()
    .max(1_048_576)
    .transform((s) => (s === '' ? [] : s.split('\n'))),
]);

/** `POST /api/v1/apps/{id}/console` -> `{output, errors, exit_code?}`. */
export const ConsoleResultSchema: z.ZodType<ConsoleResult> = z
  .object({ output: consoleLines, errors: consoleLines, exit_code: z.number().int().nullable().optional() })
  .transform(({ output, errors, exit_code }) => ({
    output,
    errors,
    ...(exit_code === undefined ? {} : { exit_code }),
  }));

/** A cog configuration: a flat object of at most 256 scalar values (keys 1-128 characters). */
export const CogConfigSchema: z.ZodType<CogConfig> = z
  .record(
    z
      .string()
      .min(1)
      .max(128)
      .refine((k) => !RESERVED_KEYS.has(k), 'reserved key'),
    z.union([z.string().max(4096), z.number(), z.boolean(), z.null()]),
  )
  .refine((o) => Object.keys(o).length <= 256, 'at most 256 keys');

/** An error body `{error: "..."}`; the message is cut to {@link MAX_SEED_MESSAGE} characters. */
export const SeedErrorBodySchema: z.ZodType<{ error: string }> = z
  .looseObject({ error: z.string() })
  .transform((v) => ({
    error: cleanSeedMessage(v.error),
  }));

/** Replaces control characters with spaces and cuts to {@link MAX_SEED_MESSAGE} characters. */
export function cleanSeedMessage(message: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters on purpose
  const clean = message.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
  return clean.length > MAX_SEED_MESSAGE ? `${clean.slice(0, MAX_SEED_MESSAGE)}...` : clean;
}

/** Any JSON answer of a write that has nothing to return (the content is ignored). */
export const AckSchema: z.ZodType<unknown> = z.unknown();
