import { z } from 'zod';
import { SEED_TOKEN_RE } from './credentials.js';
import type {
  CogConfig,
  CogLogs,
  CogManifest,
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

const optional = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const defined = <T extends Record<string, unknown>>(o: T): T =>
  // cast: the same object without its undefined fields
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const STATUS_KEYS = ['device_id', 'uptime_secs', 'epoch', 'paired', 'roles'];

/**
 * `GET /api/v1/status` (documented: `device_id, uptime_secs, epoch, ..., paired, roles`). Every field
 * is optional and a field of the wrong type is dropped (the status is informational); the other fields
 * are kept, bounded.
 */
export const SeedStatusSchema: z.ZodType<SeedStatus> = z
  .looseObject({
    device_id: optional(text(128)),
    uptime_secs: optional(z.number().nonnegative()),
    epoch: optional(z.number()),
    paired: optional(z.boolean()),
    roles: optional(z.array(z.string().max(64)).max(32)),
  })
  .transform((v) => ({
    ...boundedExtras(v, STATUS_KEYS),
    ...defined({
      device_id: v.device_id,
      uptime_secs: v.uptime_secs,
      epoch: v.epoch,
      paired: v.paired,
      roles: v.roles,
    }),
  }));

const IDENTITY_KEYS = ['device_id', 'public_key', 'firmware_version', 'epoch'];

/**
 * `GET /api/v1/identity` (documented: `device_id, public_key, firmware_version, epoch`): `device_id`
 * is required (instance ids are derived on it), the rest optional, other fields kept, bounded.
 */
export const SeedIdentitySchema: z.ZodType<SeedIdentity> = z
  .looseObject({
    device_id: text(128),
    public_key: optional(text(256)),
    firmware_version: optional(text(128)),
    epoch: optional(z.number()),
  })
  .transform((v) => ({
    ...boundedExtras(v, IDENTITY_KEYS),
    ...defined({ public_key: v.public_key, firmware_version: v.firmware_version, epoch: v.epoch }),
    device_id: v.device_id,
  }));

/**
 * `GET /api/v1/pair/status` (documented: `paired, client_count, pairing_window_open,
 * window_remaining_secs`). Every field optional (a field of the wrong type is dropped); extra fields dropped.
 */
export const PairStatusSchema: z.ZodType<PairStatus> = z
  .looseObject({
    paired: optional(z.boolean()),
    client_count: optional(count),
    pairing_window_open: optional(z.boolean()),
    window_remaining_secs: optional(z.number().nonnegative()),
  })
  .transform((v) =>
    defined({
      paired: v.paired,
      client_count: v.client_count,
      pairing_window_open: v.pairing_window_open,
      window_remaining_secs: v.window_remaining_secs,
    }),
  );

const token = z.string().regex(SEED_TOKEN_RE, 'expected a bearer token');

/**
 * `POST /api/v1/pair` -> the token, under `token` (fw 0.22.7) or `pairing_token` (the Node SDK's name);
 * `token` wins when both are there.
 */
export const PairAnswerSchema: z.ZodType<{ token: string }> = z
  .looseObject({ token: token.optional(), pairing_token: token.optional() })
  .refine((v) => v.token !== undefined || v.pairing_token !== undefined, {
    message: 'expected a bearer token under token (or pairing_token)',
    path: ['token'],
  })
  // cast: the refine above requires one of token and pairing_token
  .transform((v) => ({ token: (v.token ?? v.pairing_token) as string }));

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

/** `GET /api/v1/apps/available` -> `{version?, cogs: [...]}` (other fields passed over). */
export const StoreListSchema: z.ZodType<{ cogs: StoreCog[] }> = z
  .looseObject({ cogs: z.array(StoreCogSchema).max(4096) })
  .transform((v) => ({ cogs: v.cogs }));

/**
 * One installed cog: `id`, `version`, `running`, and `pid` when there is one (`has_binary` and others
 * passed over). The entry's shape is only known from a mock, so `running` is optional: when it is
 * absent (or not a boolean) a cog with a pid is running and one without is not (a crash-looping cog
 * shows "with no PID").
 */
export const InstalledCogSchema: z.ZodType<InstalledCog> = z
  .looseObject({
    id: cogId,
    version,
    running: optional(z.boolean()),
    pid: count.nullable().optional().catch(undefined),
  })
  .transform(({ id, version: v, running, pid }) => ({
    id,
    version: v,
    running: running ?? (typeof pid === 'number' && pid > 0),
    ...(pid === undefined ? {} : { pid }),
  }));

/** `GET /api/v1/apps` -> `{installed: [...], count?}`. */
export const InstalledListSchema: z.ZodType<{ installed: InstalledCog[] }> = z
  .looseObject({ installed: z.array(InstalledCogSchema).max(4096) })
  .transform((v) => ({ installed: v.installed }));

/** Lines: an array of lines, or one text that is split into lines; absent is none. */
const someLines = z
  .union([
    lines,
    z
      .string()
      .max(1_048_576)
      .transform((s) => (s === '' ? [] : s.split('\n'))),
  ])
  .optional();

/** `GET /api/v1/apps/{id}/logs` -> `{output, errors}` (each an array of lines or one text; absent: none). */
export const CogLogsSchema: z.ZodType<CogLogs> = z
  .looseObject({ output: someLines, errors: someLines })
  .transform((v) => ({ output: v.output ?? [], errors: v.errors ?? [] }));

/**
 * `POST /api/v1/apps/{id}/console` -> `{output|stdout, errors|stderr, exit_code|code}` (the shape is not
 * documented: both names of each are read, every field optional).
 */
export const ConsoleResultSchema: z.ZodType<ConsoleResult> = z
  .looseObject({
    output: someLines,
    stdout: someLines,
    errors: someLines,
    stderr: someLines,
    exit_code: z.number().int().nullable().optional(),
    code: z.number().int().nullable().optional().catch(undefined),
  })
  .transform((v) => {
    const exit = v.exit_code !== undefined ? v.exit_code : v.code;
    return {
      output: v.output ?? v.stdout ?? [],
      errors: v.errors ?? v.stderr ?? [],
      ...(exit === undefined ? {} : { exit_code: exit }),
    };
  });

/** `GET /api/v1/apps/{id}/manifest` (the exact JSON is not documented): `console.allowed_commands` when present. */
export const CogManifestSchema: z.ZodType<CogManifest> = z
  .looseObject({
    console: z
      .looseObject({ allowed_commands: z.array(z.string().max(4096)).max(256).optional() })
      .optional()
      .catch(undefined),
  })
  .transform((v) =>
    v.console?.allowed_commands === undefined ? {} : { allowedCommands: v.console.allowed_commands },
  );

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

/**
 * `POST /api/v1/apps/install` -> `{status: "installed" | "already_installed"}` (documented at the MCP
 * level): `already` when the Seed says the cog was installed before; anything else reads as installed.
 */
export const InstallAnswerSchema: z.ZodType<'installed' | 'already_installed'> = z.unknown().transform((v) =>
  // cast: a non-null object: its status is read and compared only
  typeof v === 'object' && v !== null && (v as { status?: unknown }).status === 'already_installed'
    ? 'already_installed'
    : 'installed',
);

/** Any JSON answer of a write that has nothing to return (the content is ignored). */
export const AckSchema: z.ZodType<unknown> = z.unknown();
