import { HEX64_RE } from '@heddle/envelope';
import { COG_ROUTES, type CogRoute, NODE_TIERS, type NodeTier } from '@heddle/model';
import { z } from 'zod';

/** The `schema` of a host configuration file. */
export const HOST_CONFIG_SCHEMA = 'heddle.host.v1';

const Path = z.string().min(1, 'expected a path').max(4096);

/** An optional integer from `lo` to `hi` whose messages say so. */
const bounded = (lo: number, hi: number, unit: string): z.ZodOptional<z.ZodInt> =>
  z
    .int(`expected an integer number of ${unit}`)
    .min(lo, `expected ${lo} to ${hi} ${unit}`)
    .max(hi, `expected ${lo} to ${hi} ${unit}`)
    .optional();

/** Bounds of the `supervisor` fields and of `controller_lease_secs`. */
export const SUPERVISOR_BOUNDS: {
  readonly interval_ms: readonly [number, number];
  readonly max_restarts: readonly [number, number];
  readonly window_secs: readonly [number, number];
  readonly backoff_initial_ms: readonly [number, number];
  readonly backoff_max_ms: readonly [number, number];
  readonly controller_lease_secs: readonly [number, number];
} = Object.freeze({
  interval_ms: [10, 3_600_000],
  max_restarts: [0, 1_000],
  window_secs: [1, 604_800],
  backoff_initial_ms: [10, 3_600_000],
  backoff_max_ms: [10, 3_600_000],
  controller_lease_secs: [1, 86_400],
});

/** The log levels a daemon's `log_level` takes (as `@heddle/cli-kit`'s `LOG_LEVELS`). */
export const CONFIG_LOG_LEVELS: readonly ['debug', 'info', 'warn', 'error'] = Object.freeze([
  'debug',
  'info',
  'warn',
  'error',
] as const);

/** Schema of a daemon's `log_level` (absent: `info`). */
export const LogLevelConfigSchema: z.ZodOptional<
  z.ZodEnum<{ debug: 'debug'; info: 'info'; warn: 'warn'; error: 'error' }>
> = z.enum(CONFIG_LOG_LEVELS, { error: `expected one of ${CONFIG_LOG_LEVELS.join(', ')}` }).optional();

/** A daemon's `metrics_listen`: where `/metrics`, `/healthz` and `/readyz` are served (absent: not served). */
export interface MetricsListenConfig {
  readonly host: string;
  readonly port: number;
}

/** Schema of {@link MetricsListenConfig} (`host` an address such as `127.0.0.1`, `port` 0..65535; 0: any free port). */
export const MetricsListenSchema: z.ZodType<MetricsListenConfig> = z.strictObject({
  host: z.string().min(1, 'expected an address').max(255),
  port: z
    .int('expected an integer port')
    .min(0, 'expected a port 0..65535')
    .max(65535, 'expected a port 0..65535'),
});

/** Schema of `heddle-host.json` (see docs/host.md, "Configuration"). Paths are relative to the file. */
export const HostConfigFileSchema: z.ZodType<HostConfigFile> = z.strictObject({
  schema: z.literal(HOST_CONFIG_SCHEMA, { error: `expected "${HOST_CONFIG_SCHEMA}"` }),
  listen: z.strictObject({
    host: z.string().min(1, 'expected an address').max(255),
    port: z
      .int('expected an integer port')
      .min(0, 'expected a port 0..65535')
      .max(65535, 'expected a port 0..65535'),
  }),
  tls: z.strictObject({ cert: Path, key: Path }).optional(),
  key_file: Path,
  controllers: z
    .array(
      z.strictObject({
        public_key: z
          .string()
          .regex(HEX64_RE, 'expected an Ed25519 public key as 64 lower-case hex characters'),
        name: z.string().min(1).max(64).optional(),
      }),
    )
    .max(256),
  trust_file: Path,
  revocation_list: Path,
  routes: z
    .array(z.enum(COG_ROUTES, { error: `expected one of ${COG_ROUTES.join(', ')}` }))
    .min(1, 'expected at least one route')
    .refine((r) => new Set(r).size === r.length, 'a route is listed twice'),
  tier: z.enum(NODE_TIERS, { error: `expected one of ${NODE_TIERS.join(', ')}` }),
  policy_file: Path.optional(),
  data_dir: Path,
  advertise_address: z
    .string()
    .regex(/^wss?:\/\/[^\s]+$/, 'expected a ws:// or wss:// URL')
    .max(2048)
    .optional(),
  native: z
    .strictObject({
      run_as_user: z.string().min(1).max(64).optional(),
      allow_host_user: z.boolean().optional(),
    })
    .optional(),
  limits: z
    .strictObject({
      max_sessions: z.int().min(1).max(65_536).optional(),
      max_connections_per_peer: z.int().min(1).max(65_536).optional(),
      max_calls_per_session: z.int().min(1).max(1024).optional(),
      max_package_bytes: z.int().min(1).optional(),
      handshake_timeout_ms: z.int().min(100).max(120_000).optional(),
      idle_timeout_ms: z.int().min(100).max(3_600_000).optional(),
    })
    .optional(),
  revocation_check_secs: z.int().min(1).max(86_400).optional(),
  shutdown_grace_secs: z.int().min(0).max(3_600).optional(),
  controller_lease_secs: bounded(...SUPERVISOR_BOUNDS.controller_lease_secs, 'seconds'),
  supervisor: z
    .strictObject({
      interval_ms: bounded(...SUPERVISOR_BOUNDS.interval_ms, 'ms'),
      max_restarts: bounded(...SUPERVISOR_BOUNDS.max_restarts, 'restarts'),
      window_secs: bounded(...SUPERVISOR_BOUNDS.window_secs, 'seconds'),
      backoff_initial_ms: bounded(...SUPERVISOR_BOUNDS.backoff_initial_ms, 'ms'),
      backoff_max_ms: bounded(...SUPERVISOR_BOUNDS.backoff_max_ms, 'ms'),
    })
    .optional(),
  log_level: LogLevelConfigSchema,
  metrics_listen: MetricsListenSchema.optional(),
});

/** `heddle-host.json` as written (docs/host.md, "Configuration"). */
export interface HostConfigFile {
  readonly schema: typeof HOST_CONFIG_SCHEMA;
  readonly listen: { readonly host: string; readonly port: number };
  readonly tls?: { readonly cert: string; readonly key: string } | undefined;
  readonly key_file: string;
  /** The controllers whose signed requests the host accepts. */
  readonly controllers: readonly { readonly public_key: string; readonly name?: string | undefined }[];
  readonly trust_file: string;
  readonly revocation_list: string;
  readonly routes: readonly CogRoute[];
  readonly tier: NodeTier;
  readonly policy_file?: string | undefined;
  readonly data_dir: string;
  readonly advertise_address?: string | undefined;
  readonly native?:
    | { readonly run_as_user?: string | undefined; readonly allow_host_user?: boolean | undefined }
    | undefined;
  readonly limits?:
    | {
        readonly max_sessions?: number | undefined;
        readonly max_connections_per_peer?: number | undefined;
        readonly max_calls_per_session?: number | undefined;
        readonly max_package_bytes?: number | undefined;
        readonly handshake_timeout_ms?: number | undefined;
        readonly idle_timeout_ms?: number | undefined;
      }
    | undefined;
  readonly revocation_check_secs?: number | undefined;
  readonly shutdown_grace_secs?: number | undefined;
  readonly controller_lease_secs?: number | undefined;
  readonly supervisor?:
    | {
        readonly interval_ms?: number | undefined;
        readonly max_restarts?: number | undefined;
        readonly window_secs?: number | undefined;
        readonly backoff_initial_ms?: number | undefined;
        readonly backoff_max_ms?: number | undefined;
      }
    | undefined;
  /** The least severe log level written (`--log-level` overrides it); absent: `info`. */
  readonly log_level?: (typeof CONFIG_LOG_LEVELS)[number] | undefined;
  /** Where metrics and health are served; absent: not served. */
  readonly metrics_listen?: MetricsListenConfig | undefined;
}
