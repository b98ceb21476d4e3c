import {
  type CONFIG_LOG_LEVELS,
  LogLevelConfigSchema,
  type MetricsListenConfig,
  MetricsListenSchema,
} from '@heddle/host-service';
import { z } from 'zod';

/** The `schema` of a controller configuration file. */
export const CONTROLLER_CONFIG_SCHEMA = 'heddle.controller.v1';

/** The only address the operator API listens on. */
export const API_HOST = '127.0.0.1';

/** Default port of the operator API. */
export const DEFAULT_API_PORT = 7070;

const Path = z.string().min(1, 'expected a path').max(4096);

const Port = z
  .int('expected an integer port')
  .min(1, 'expected a port 1..65535')
  .max(65535, 'expected a port 1..65535');

/** The `state` section of `controller.json`: where the controller keeps its state (docs/state.md). */
const StateConfigSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('sqlite') }),
    z
      .strictObject({
        kind: z.literal('postgres'),
        url: z
          .string()
          .max(4096)
          .regex(/^postgres(ql)?:\/\/[^\s]+$/, 'expected a postgres:// URL')
          .optional(),
        host: z.string().min(1, 'expected a host name or address').max(255).optional(),
        port: Port.optional(),
        database: z.string().min(1, 'expected a database name').max(63).optional(),
        user: z.string().min(1, 'expected a user name').max(63).optional(),
        password_file: Path.optional(),
        call_timeout_ms: z.int('expected whole milliseconds').min(100).max(600_000).optional(),
        max_retries: z.int('expected a whole number').min(0).max(100).optional(),
      })
      .superRefine((v, ctx) => {
        const parts = ['host', 'port', 'database', 'user'] as const;
        if (v.url !== undefined) {
          for (const f of parts) {
            if (v[f] !== undefined)
              ctx.addIssue({
                code: 'custom',
                message: 'give url or host, port, database and user, not both',
                path: [f],
              });
          }
          return;
        }
        for (const f of ['host', 'database', 'user'] as const) {
          if (v[f] === undefined)
            ctx.addIssue({ code: 'custom', message: 'expected url, or host, database and user', path: [f] });
        }
      }),
  ],
  { error: 'expected kind "sqlite" or "postgres"' },
);

/** Schema of `controller.json` (docs/operator-guide.md, "Controller daemon"). Paths are relative to the file. */
export const ControllerConfigFileSchema: z.ZodType<ControllerConfigFile> = z.strictObject({
  schema: z.literal(CONTROLLER_CONFIG_SCHEMA, { error: `expected "${CONTROLLER_CONFIG_SCHEMA}"` }),
  api: z.strictObject({
    host: z.literal(API_HOST, { error: `expected "${API_HOST}" (the API listens on loopback only)` }),
    port: z
      .int('expected an integer port')
      .min(0, 'expected a port 0..65535')
      .max(65535, 'expected a port 0..65535'),
    remote: z
      .strictObject({
        host: z.union([z.ipv4('expected an IPv4 address'), z.ipv6('expected an IP address')]),
        port: z
          .int('expected an integer port')
          .min(0, 'expected a port 0..65535')
          .max(65535, 'expected a port 0..65535'),
        tls_cert_file: Path.optional(),
        tls_key_file: Path.optional(),
      })
      .refine((r) => (r.tls_cert_file === undefined) === (r.tls_key_file === undefined), {
        message: 'give both tls_cert_file and tls_key_file, or neither (a self-signed certificate is made)',
        path: ['tls_cert_file'],
      })
      .optional(),
  }),
  key_file: Path,
  trust_file: Path,
  policy_file: Path,
  revocation_list: Path,
  state_db: Path,
  state: StateConfigSchema.optional(),
  chain_file: Path,
  data_dir: Path,
  refresh_secs: z.int('expected whole seconds').min(1).max(3_600).optional(),
  // Both at most the signed request lifetime (290 s): an answer after that is refused as late.
  place_timeout_secs: z
    .int('expected whole seconds')
    .min(1)
    .max(290, 'at most 290 (the request lifetime)')
    .optional(),
  call_timeout_secs: z
    .int('expected whole seconds')
    .min(1)
    .max(290, 'at most 290 (the request lifetime)')
    .optional(),
  shutdown_grace_secs: z.int('expected whole seconds').min(0).max(3_600).optional(),
  reconcile_timeout_secs: z.int('expected whole seconds').min(1).max(290).optional(),
  lifecycle: z
    .strictObject({
      dead_after_secs: z.int('expected whole seconds').min(1).max(86_400).optional(),
      reschedule_timeout_secs: z
        .int('expected whole seconds')
        .min(1)
        .max(290, 'at most 290 (the request lifetime)')
        .optional(),
      reschedule_backoff_secs: z.int('expected whole seconds').min(1).max(3_600).optional(),
      reschedule_backoff_max_secs: z.int('expected whole seconds').min(1).max(86_400).optional(),
      max_reschedules: z.int('expected a whole number').min(0).max(100).optional(),
      health_timeout_secs: z.int('expected whole seconds').min(1).max(60).optional(),
      clock_skew_warn_secs: z
        .int('expected whole seconds')
        .min(1)
        .max(29, 'at most 29 (under the 30 s skew window)')
        .optional(),
    })
    .optional(),
  leader_database_url: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'expected a postgres:// URL')
    .max(4096)
    .optional(),
  leader_refresh_secs: z
    .int('expected whole seconds')
    .min(1, 'expected 1 to 600 seconds')
    .max(600, 'expected 1 to 600 seconds')
    .optional(),
  log_level: LogLevelConfigSchema,
  metrics_listen: MetricsListenSchema.optional(),
});

/** `controller.json` as written (docs/operator-guide.md, "Controller daemon"). */
export interface ControllerConfigFile {
  readonly schema: typeof CONTROLLER_CONFIG_SCHEMA;
  /**
   * Where the operator API listens: plain HTTP on loopback, and with `remote` also over TLS on another
   * address (docs/operator-guide.md, "Operating from a second machine").
   */
  readonly api: {
    readonly host: typeof API_HOST;
    readonly port: number;
    readonly remote?: RemoteApiConfig | undefined;
  };
  readonly key_file: string;
  readonly trust_file: string;
  readonly policy_file: string;
  readonly revocation_list: string;
  /** The SQLite state database (used when `state` is absent or `{ "kind": "sqlite" }`). */
  readonly state_db: string;
  /** Where the state is kept: SQLite at `state_db` (the default), or a PostgreSQL server. */
  readonly state?: StateConfig | undefined;
  readonly chain_file: string;
  readonly data_dir: string;
  /** Seconds between two ticks of the daemon (1..3600, default 10). */
  readonly refresh_secs?: number | undefined;
  readonly place_timeout_secs?: number | undefined;
  readonly call_timeout_secs?: number | undefined;
  readonly shutdown_grace_secs?: number | undefined;
  readonly reconcile_timeout_secs?: number | undefined;
  /** Timers of node death and rescheduling. */
  readonly lifecycle?:
    | {
        readonly dead_after_secs?: number | undefined;
        readonly reschedule_timeout_secs?: number | undefined;
        readonly reschedule_backoff_secs?: number | undefined;
        readonly reschedule_backoff_max_secs?: number | undefined;
        readonly max_reschedules?: number | undefined;
        readonly health_timeout_secs?: number | undefined;
        /** A host whose clock is off by more than this raises a `clock_skew` alert (1..29, default 10). */
        readonly clock_skew_warn_secs?: number | undefined;
      }
    | undefined;
  /**
   * Several controllers (docs/operator-guide.md, "Running several controllers"): the PostgreSQL
   * database holding their leadership lease. Absent: this controller runs alone and always ticks.
   */
  readonly leader_database_url?: string | undefined;
  /** The leadership lease's refresh period R in seconds (1..600, default 5): a dead leader is replaced within 2R. */
  readonly leader_refresh_secs?: number | undefined;
  /** The least severe log level written (`--log-level` overrides it); absent: `info`. */
  readonly log_level?: (typeof CONFIG_LOG_LEVELS)[number] | undefined;
  /** Where metrics and health are served (unauthenticated); absent: not served. */
  readonly metrics_listen?: MetricsListenConfig | undefined;
}

/** The `state` section of `controller.json` (docs/state.md). */
export type StateConfig = { readonly kind: 'sqlite' } | PostgresStateConfig;

/** `state` with `kind` `postgres`: a `url`, or `host` (and `port`, default 5432), `database` and `user`. */
export interface PostgresStateConfig {
  readonly kind: 'postgres';
  /** `postgres://user@host:port/database` (a password in it works, but `password_file` keeps it out of the file). */
  readonly url?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly database?: string | undefined;
  readonly user?: string | undefined;
  /** A file holding the password (its first line; relative to controller.json); it overrides one in `url`. */
  readonly password_file?: string | undefined;
  /** How long one store call may wait for the server before the request is refused `store_unavailable` (ms, default 15000). */
  readonly call_timeout_ms?: number | undefined;
  /** How many times a transaction that lost a serialization conflict runs again (default 8). */
  readonly max_retries?: number | undefined;
}

/** `api.remote` of `controller.json`: the TLS listener for operators on other machines. */
export interface RemoteApiConfig {
  /** The IP address to listen on (`0.0.0.0` for every interface). */
  readonly host: string;
  /** The TCP port (0: any free port). */
  readonly port: number;
  /** The operator's PEM certificate (with `tls_key_file`); without both, a self-signed one is made in the home. */
  readonly tls_cert_file?: string | undefined;
  /** The PEM private key of `tls_cert_file`. */
  readonly tls_key_file?: string | undefined;
}
