import type { JsonValue } from '@heddle/envelope';
import { COG_ID_RE, COG_ROUTES, type CogRoute } from '@heddle/package';
import { Refusal } from '@heddle/protocol';
import { MAX_INTERVAL_SECS, type RunMode } from '@heddle/runtime';
import { z } from 'zod';

/** Longest stop grace a request may ask for: 120 s (a call's answer must still fit its lifetime). */
export const MAX_GRACE_MS = 120_000;
/** Stop grace when a request names none: 5 s. */
export const DEFAULT_GRACE_MS = 5_000;
/** Most log lines one `logs` call returns. */
export const MAX_LOG_LINES = 10_000;
/** Log lines when a request names none. */
export const DEFAULT_LOG_LINES = 100;
/** Most config values a place may carry. */
export const MAX_CONFIG_VALUES = 64;

const Hash = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');
const VARIANT_RE = /^[a-z0-9_]{1,16}-[a-z]{1,16}$/;

const RunModeSchema: z.ZodType<RunMode> = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('once') }),
  z.strictObject({ type: z.literal('interval'), secs: z.int().min(1).max(MAX_INTERVAL_SECS) }),
  z.strictObject({ type: z.literal('listener') }),
]);

const ConfigValue: z.ZodType<JsonValue> = z.union([
  z.string().max(4096),
  z.number(),
  z.boolean(),
  z.null(),
]) as z.ZodType<JsonValue>;

/** The instance configuration a place or load carries. */
export interface PlaceConfig {
  /** How the instance runs. */
  readonly mode: RunMode;
  /** Config values by field name (checked by the adapter against the cog's schema). */
  readonly values: Readonly<Record<string, JsonValue>>;
}

/** Body of `workload.place` and `workload.load` (docs/protocol.md, "Method bodies"). */
export interface PlaceBody {
  /** The cog id; the fetched package's id must equal it. */
  readonly name: string;
  /** BLAKE3 of the package envelope: what the host fetches from the controller. */
  readonly manifest_hash: string;
  /** The variant the controller chose (`<arch>-<route>`); its route selects the adapter. */
  readonly variant: string;
  /** Instance configuration. */
  readonly config: PlaceConfig;
  /** Start after loading (place only; a load never starts). Default false. */
  readonly start: boolean;
}

/** Body of the instance verbs (`start`, `stop`, `unload`, `status`, `logs`). */
export interface InstanceBody {
  /** The instance; `status` without it lists every instance. */
  readonly instance_id?: string;
  /** `stop`: time between SIGTERM and the hard kill (default 5 s, at most 120 s). */
  readonly grace_ms?: number;
  /** `status` listing: also report instances taken down on purpose. */
  readonly include_departed?: boolean;
  /** `logs`: how many lines (default 100, at most 10,000). */
  readonly lines?: number;
}

/** Schema of {@link PlaceBody}. */
export const PlaceBodySchema: z.ZodType<PlaceBody> = z.strictObject({
  name: z.string().regex(COG_ID_RE, 'expected a cog id ([a-z0-9][a-z0-9._-]{0,63})'),
  manifest_hash: Hash,
  variant: z.string().regex(VARIANT_RE, 'expected <arch>-<route>, such as x86_64-native'),
  config: z.strictObject({
    mode: RunModeSchema,
    values: z
      .record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'expected a config field name'), ConfigValue)
      .refine((v) => Object.keys(v).length <= MAX_CONFIG_VALUES, `at most ${MAX_CONFIG_VALUES} values`)
      .default({}),
  }),
  start: z.boolean().default(false),
});

/** Schema of {@link InstanceBody}. */
export const InstanceBodySchema: z.ZodType<InstanceBody> = z.strictObject({
  instance_id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}-[0-9a-f]{16}$/, 'expected an instance id (<cog id>-<16 hex>)')
    .optional(),
  grace_ms: z.int().min(0).max(MAX_GRACE_MS).optional(),
  include_departed: z.boolean().optional(),
  lines: z.int().min(1).max(MAX_LOG_LINES).optional(),
});

/**
 * Parses a request body with `schema`; refuses with `invalid_request` (authenticated: the request
 * itself was verified) naming the first offending field as `body.<path>`.
 */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, method: string): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue === undefined || issue.path.length === 0 ? '' : `.${issue.path.join('.')}`;
  const field = `body${path}`;
  throw new Refusal('invalid_request', `${method} ${field}: ${issue?.message ?? 'invalid'}`, {
    authenticated: true,
    field,
  });
}

/** The route of a variant name (`x86_64-native` to `native`), or undefined when it names no route. */
export function routeOfVariant(variant: string): CogRoute | undefined {
  const dash = variant.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const route = variant.slice(dash + 1);
  return (COG_ROUTES as readonly string[]).includes(route) ? (route as CogRoute) : undefined;
}

/** The instance body's `instance_id`, or an `invalid_request` refusal naming it when absent. */
export function requireInstanceId(body: InstanceBody, method: string): string {
  if (body.instance_id !== undefined) return body.instance_id;
  throw new Refusal('invalid_request', `${method} body.instance_id: required`, {
    authenticated: true,
    field: 'body.instance_id',
  });
}
