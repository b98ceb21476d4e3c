import { dirname, isAbsolute, resolve } from 'node:path';
import { DEFAULT_LOG_LEVEL, errorMessage, type LogLevel } from '@heddle/cli-kit';
import { type ControllerConfigFile, ControllerConfigFileSchema } from '@heddle/control-plane';
import { parseJson, readTextBounded } from '@heddle/envelope';
import { badInput } from './cli-error.js';

export {
  API_HOST,
  CONTROLLER_CONFIG_SCHEMA,
  type ControllerConfigFile,
  ControllerConfigFileSchema,
  DEFAULT_API_PORT,
} from '@heddle/control-plane';

/** Default interval of the daemon's tick (refresh the nodes, settle), in seconds. */
export const DEFAULT_REFRESH_SECS = 10;

/** Default refresh period of the leadership lease (several controllers), in seconds. */
export const DEFAULT_LEADER_REFRESH_SECS = 5;

/** Default time a shutdown waits for requests in flight, in seconds. */
export const DEFAULT_SHUTDOWN_GRACE_SECS = 10;

/** Largest accepted configuration file: 64 KiB. */
export const MAX_CONFIG_BYTES: number = 64 * 1024;

/** A validated configuration with every path absolute and every default filled in. */
export interface ControllerConfig {
  /** The file it was read from (absolute). */
  readonly path: string;
  /** The controller home: the directory of the file (api.token and api.json live there). */
  readonly home: string;
  readonly api: { readonly host: string; readonly port: number; readonly remote: RemoteApi | undefined };
  readonly keyFile: string;
  readonly trustFile: string;
  readonly policyFile: string;
  readonly revocationList: string;
  readonly stateDb: string;
  /** Where the state is kept: `state` of the file (SQLite at `stateDb` when absent). */
  readonly state: StateChoice;
  readonly chainFile: string;
  readonly dataDir: string;
  readonly refreshSecs: number;
  readonly placeTimeoutMs: number | undefined;
  readonly callTimeoutMs: number | undefined;
  /** How long a lost place is polled with `status` before it is kept unsettled (default 30 s). */
  readonly reconcileTimeoutMs: number | undefined;
  readonly shutdownGraceSecs: number;
  /** The `lifecycle` section as control-plane tunables (only those set; the rest keep their defaults). */
  readonly lifecycle: LifecycleTunables;
  /** `log_level` (default `info`; `--log-level` overrides it). */
  readonly logLevel: LogLevel;
  /** `metrics_listen`: where `/metrics`, `/healthz` and `/readyz` are served; undefined: not served. */
  readonly metricsListen: { readonly host: string; readonly port: number } | undefined;
  /**
   * With several controllers (a `leader_database_url`, or a PostgreSQL state): the lease's database
   * (undefined: the state's) and refresh period (ms); undefined: this controller runs alone.
   */
  readonly leader: { readonly databaseUrl: string | undefined; readonly refreshMs: number } | undefined;
}

/** The state store the controller opens (`state` of controller.json, paths absolute). */
export type StateChoice =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      /** The URL, or host/port/database/user (as given). */
      readonly url: string | undefined;
      readonly host: string | undefined;
      readonly port: number | undefined;
      readonly database: string | undefined;
      readonly user: string | undefined;
      /** The file holding the password (absolute), read when the store opens. */
      readonly passwordFile: string | undefined;
      readonly callTimeoutMs: number | undefined;
      readonly maxRetries: number | undefined;
    };

/** `api.remote` with absolute paths: the TLS listener for operators on other machines. */
export interface RemoteApi {
  readonly host: string;
  readonly port: number;
  /** The operator's certificate and key (PEM); undefined: a self-signed pair kept in the home. */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
}

/** The control-plane tunables the `lifecycle` section sets (names of `@heddle/control-plane`'s config). */
export interface LifecycleTunables {
  readonly deadAfterMs?: number;
  readonly suspectAfterMs?: number;
  readonly rescheduleTimeoutMs?: number;
  readonly rescheduleBackoffMs?: number;
  readonly rescheduleBackoffMaxMs?: number;
  readonly maxReschedules?: number;
  readonly healthTimeoutMs?: number;
  readonly clockSkewWarnMs?: number;
}

/** The default `suspectAfterMs` of the control plane (15 s): lowered with a shorter `dead_after_secs`. */
const DEFAULT_SUSPECT_AFTER_MS = 15_000;

function lifecycleTunables(l: ControllerConfigFile['lifecycle']): LifecycleTunables {
  if (l === undefined) return {};
  const ms = (s: number | undefined): number | undefined => (s === undefined ? undefined : s * 1000);
  const out: { -readonly [K in keyof LifecycleTunables]: LifecycleTunables[K] } = {};
  const dead = ms(l.dead_after_secs);
  if (dead !== undefined) {
    out.deadAfterMs = dead;
    out.suspectAfterMs = Math.min(dead, DEFAULT_SUSPECT_AFTER_MS);
  }
  const timeout = ms(l.reschedule_timeout_secs);
  if (timeout !== undefined) out.rescheduleTimeoutMs = timeout;
  const backoff = ms(l.reschedule_backoff_secs);
  if (backoff !== undefined) out.rescheduleBackoffMs = backoff;
  const max = ms(l.reschedule_backoff_max_secs);
  if (max !== undefined) out.rescheduleBackoffMaxMs = max;
  if (l.max_reschedules !== undefined) out.maxReschedules = l.max_reschedules;
  const health = ms(l.health_timeout_secs);
  if (health !== undefined) out.healthTimeoutMs = health;
  const warn = ms(l.clock_skew_warn_secs);
  if (warn !== undefined) out.clockSkewWarnMs = warn;
  return out;
}

/** A zod issue path as the operator reads it: `api.port`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out === '' ? '$' : out;
}

/**
 * Validates a parsed configuration value; relative paths resolve against the file's directory. Throws
 * a `CliError` `config_invalid` (exit 3) naming the first bad field.
 */
export function parseControllerConfig(value: unknown, path: string): ControllerConfig {
  const r = ControllerConfigFileSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const unknown = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
    const field = fieldPath([...(issue?.path ?? []), ...(unknown === undefined ? [] : [unknown])]);
    const message = unknown === undefined ? (issue?.message ?? 'invalid') : 'unknown field';
    throw badInput('config_invalid', `${path}: ${field}: ${message}`, field);
  }
  const c = r.data;
  const home = dirname(path);
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(home, p));
  return {
    path,
    home,
    api: {
      host: c.api.host,
      port: c.api.port,
      remote:
        c.api.remote === undefined
          ? undefined
          : {
              host: c.api.remote.host,
              port: c.api.remote.port,
              tls:
                c.api.remote.tls_cert_file === undefined || c.api.remote.tls_key_file === undefined
                  ? undefined
                  : { certFile: abs(c.api.remote.tls_cert_file), keyFile: abs(c.api.remote.tls_key_file) },
            },
    },
    keyFile: abs(c.key_file),
    trustFile: abs(c.trust_file),
    policyFile: abs(c.policy_file),
    revocationList: abs(c.revocation_list),
    stateDb: abs(c.state_db),
    state:
      c.state === undefined || c.state.kind === 'sqlite'
        ? { kind: 'sqlite', path: abs(c.state_db) }
        : {
            kind: 'postgres',
            url: c.state.url,
            host: c.state.host,
            port: c.state.port,
            database: c.state.database,
            user: c.state.user,
            passwordFile: c.state.password_file === undefined ? undefined : abs(c.state.password_file),
            callTimeoutMs: c.state.call_timeout_ms,
            maxRetries: c.state.max_retries,
          },
    chainFile: abs(c.chain_file),
    dataDir: abs(c.data_dir),
    refreshSecs: c.refresh_secs ?? DEFAULT_REFRESH_SECS,
    placeTimeoutMs: c.place_timeout_secs === undefined ? undefined : c.place_timeout_secs * 1000,
    callTimeoutMs: c.call_timeout_secs === undefined ? undefined : c.call_timeout_secs * 1000,
    reconcileTimeoutMs: c.reconcile_timeout_secs === undefined ? undefined : c.reconcile_timeout_secs * 1000,
    shutdownGraceSecs: c.shutdown_grace_secs ?? DEFAULT_SHUTDOWN_GRACE_SECS,
    lifecycle: lifecycleTunables(c.lifecycle),
    logLevel: c.log_level ?? DEFAULT_LOG_LEVEL,
    metricsListen: c.metrics_listen === undefined ? undefined : { ...c.metrics_listen },
    // Several controllers: the lease lives in `leader_database_url`, else in the PostgreSQL state's
    // database (controllers sharing a state must never tick at once).
    leader:
      c.leader_database_url === undefined && c.state?.kind !== 'postgres'
        ? undefined
        : {
            databaseUrl: c.leader_database_url,
            refreshMs: (c.leader_refresh_secs ?? DEFAULT_LEADER_REFRESH_SECS) * 1000,
          },
  };
}

/**
 * Reads and validates `controller.json` (strict JSON, at most 64 KiB). Throws `CliError`
 * `config_unreadable` or `config_invalid` (exit 3), naming the field.
 */
export function loadControllerConfig(path: string): ControllerConfig {
  let text: string;
  try {
    text = readTextBounded(path, MAX_CONFIG_BYTES);
  } catch (err) {
    throw badInput(
      'config_unreadable',
      `cannot read config ${path}: ${errorMessage(err)} (create it with 'heddle init')`,
      '$',
      err,
    );
  }
  let value: unknown;
  try {
    value = parseJson(text, { maxBytes: MAX_CONFIG_BYTES });
  } catch (err) {
    throw badInput('config_invalid', `${path}: not valid JSON: ${errorMessage(err)}`, '$', err);
  }
  return parseControllerConfig(value, path);
}
