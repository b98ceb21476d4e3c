import { dirname, isAbsolute, resolve } from 'node:path';
import { badInput, DEFAULT_LOG_LEVEL, errorMessage, type LogLevel } from '@heddle/cli-kit';
import { parseJson, readTextBounded } from '@heddle/envelope';
import { DEFAULT_SUPERVISOR_POLICY, HostConfigFileSchema } from '@heddle/host-service';
import type { CogRoute, NodeTier } from '@heddle/model';

export {
  HOST_CONFIG_SCHEMA,
  type HostConfigFile,
  HostConfigFileSchema,
  SUPERVISOR_BOUNDS,
} from '@heddle/host-service';

/** The configuration file name `init` writes. */
export const HOST_CONFIG_FILE = 'heddle-host.json';

/** Largest accepted configuration file: 64 KiB. */
export const MAX_CONFIG_BYTES: number = 64 * 1024;

/** Default interval of the revocation list re-check, in seconds. */
export const DEFAULT_REVOCATION_CHECK_SECS = 10;

/** Default time a shutdown waits for calls being handled, in seconds. */
export const DEFAULT_SHUTDOWN_GRACE_SECS = 30;

/** A validated configuration with every path absolute and every default filled in. */
export interface HostConfig {
  /** The file it was read from (absolute). */
  readonly path: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  readonly keyFile: string;
  readonly controllers: readonly { readonly publicKey: string; readonly name: string | undefined }[];
  readonly trustFile: string;
  readonly revocationList: string;
  readonly routes: readonly CogRoute[];
  readonly tier: NodeTier;
  readonly policyFile: string | undefined;
  readonly dataDir: string;
  readonly advertiseAddress: string | undefined;
  readonly native: { readonly runAsUser: string | undefined; readonly allowHostUser: boolean };
  readonly limits: {
    readonly maxSessions: number | undefined;
    readonly maxConnectionsPerPeer: number | undefined;
    readonly maxCallsPerSession: number | undefined;
    readonly maxPackageBytes: number | undefined;
    readonly handshakeTimeoutMs: number | undefined;
    readonly idleTimeoutMs: number | undefined;
  };
  readonly revocationCheckSecs: number;
  readonly shutdownGraceSecs: number;
  /** The controller lease (`controller_lease_secs`); undefined: off. */
  readonly controllerLeaseSecs: number | undefined;
  /** `log_level` (default `info`; `--log-level` overrides it). */
  readonly logLevel: LogLevel;
  /** `metrics_listen`: where `/metrics`, `/healthz` and `/readyz` are served; undefined: not served. */
  readonly metricsListen: { readonly host: string; readonly port: number } | undefined;
  /** The supervisor's timing and restart budget, defaults filled in. */
  readonly supervisor: {
    readonly intervalMs: number;
    readonly maxRestarts: number;
    readonly windowSecs: number;
    readonly backoffInitialMs: number;
    readonly backoffMaxMs: number;
  };
}

/** A zod issue path as the operator reads it: `controllers[0].public_key`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out === '' ? '$' : out;
}

/**
 * Validates a parsed configuration value; relative paths resolve against `baseDir`. Throws a `CliError`
 * `config_invalid` (exit 3) naming the first bad field.
 */
export function parseHostConfig(value: unknown, path: string): HostConfig {
  const r = HostConfigFileSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = issue === undefined ? '$' : fieldPath(issue.path);
    const message = issue?.message ?? 'invalid';
    throw badInput('config_invalid', `${path}: ${field}: ${message}`, field);
  }
  const c = r.data;
  const d = DEFAULT_SUPERVISOR_POLICY;
  const supervisor = {
    intervalMs: c.supervisor?.interval_ms ?? d.intervalMs,
    maxRestarts: c.supervisor?.max_restarts ?? d.maxRestarts,
    windowSecs: c.supervisor?.window_secs ?? d.windowMs / 1000,
    backoffInitialMs: c.supervisor?.backoff_initial_ms ?? d.backoffInitialMs,
    backoffMaxMs: c.supervisor?.backoff_max_ms ?? d.backoffMaxMs,
  };
  if (supervisor.backoffMaxMs < supervisor.backoffInitialMs) {
    const field = 'supervisor.backoff_max_ms';
    throw badInput(
      'config_invalid',
      `${path}: ${field}: must not be below supervisor.backoff_initial_ms (${supervisor.backoffInitialMs}; the default max is ${d.backoffMaxMs})`,
      field,
    );
  }
  const base = dirname(path);
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(base, p));
  return {
    path,
    listen: { host: c.listen.host, port: c.listen.port },
    tls: c.tls === undefined ? undefined : { cert: abs(c.tls.cert), key: abs(c.tls.key) },
    keyFile: abs(c.key_file),
    controllers: c.controllers.map((k) => ({ publicKey: k.public_key, name: k.name })),
    trustFile: abs(c.trust_file),
    revocationList: abs(c.revocation_list),
    routes: [...c.routes],
    tier: c.tier,
    policyFile: c.policy_file === undefined ? undefined : abs(c.policy_file),
    dataDir: abs(c.data_dir),
    advertiseAddress: c.advertise_address,
    native: { runAsUser: c.native?.run_as_user, allowHostUser: c.native?.allow_host_user ?? false },
    limits: {
      maxSessions: c.limits?.max_sessions,
      maxConnectionsPerPeer: c.limits?.max_connections_per_peer,
      maxCallsPerSession: c.limits?.max_calls_per_session,
      maxPackageBytes: c.limits?.max_package_bytes,
      handshakeTimeoutMs: c.limits?.handshake_timeout_ms,
      idleTimeoutMs: c.limits?.idle_timeout_ms,
    },
    revocationCheckSecs: c.revocation_check_secs ?? DEFAULT_REVOCATION_CHECK_SECS,
    shutdownGraceSecs: c.shutdown_grace_secs ?? DEFAULT_SHUTDOWN_GRACE_SECS,
    controllerLeaseSecs: c.controller_lease_secs,
    logLevel: c.log_level ?? DEFAULT_LOG_LEVEL,
    metricsListen: c.metrics_listen === undefined ? undefined : { ...c.metrics_listen },
    supervisor,
  };
}

/**
 * Reads and validates a configuration file (strict JSON, at most 64 KiB). Throws `CliError`
 * `config_unreadable` or `config_invalid` (exit 3), naming the field.
 */
export function loadHostConfig(path: string): HostConfig {
  let text: string;
  try {
    text = readTextBounded(path, MAX_CONFIG_BYTES);
  } catch (err) {
    throw badInput('config_unreadable', `cannot read config ${path}: ${errorMessage(err)}`, '$', err);
  }
  let value: unknown;
  try {
    value = parseJson(text, { maxBytes: MAX_CONFIG_BYTES });
  } catch (err) {
    throw badInput('config_invalid', `${path}: not valid JSON: ${errorMessage(err)}`, '$', err);
  }
  return parseHostConfig(value, path);
}
