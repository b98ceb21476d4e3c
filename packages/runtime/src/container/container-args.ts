import type { JsonValue } from '@heddle/envelope';
import type { HostContract, RunMode } from '../workload.js';

/** Where the instance's data directory is mounted inside the container. */
export const CONTAINER_DATA_DIR = '/data';

/** Label keys the adapter puts on every container it creates. */
export const CONTAINER_LABELS: {
  readonly instance: 'heddle.instance';
  readonly workload: 'heddle.workload';
  readonly version: 'heddle.version';
  readonly ref: 'heddle.ref';
} = {
  instance: 'heddle.instance',
  workload: 'heddle.workload',
  version: 'heddle.version',
  ref: 'heddle.ref',
};

/** The environment variable names of the host contract inside a container. */
export const CONTAINER_ENV: {
  readonly nodeId: 'HEDDLE_NODE_ID';
  readonly dataDir: 'HEDDLE_DATA_DIR';
  readonly sensorFeedPort: 'HEDDLE_SENSOR_FEED_PORT';
  readonly ingestUrl: 'HEDDLE_INGEST_URL';
  readonly ingestToken: 'HEDDLE_INGEST_TOKEN';
} = {
  nodeId: 'HEDDLE_NODE_ID',
  dataDir: 'HEDDLE_DATA_DIR',
  sensorFeedPort: 'HEDDLE_SENSOR_FEED_PORT',
  ingestUrl: 'HEDDLE_INGEST_URL',
  ingestToken: 'HEDDLE_INGEST_TOKEN',
};

/** Everything `create` needs for one container. */
export interface ContainerCreateSpec {
  readonly name: string;
  readonly image: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly host: HostContract;
  /** `--memory` in MiB (the cog's `ram_mb`). */
  readonly ramMb: number;
  /** CPU percent of one core (the cog's `cpu_pct`), as `--cpus pct/100`. */
  readonly cpuPct: number;
  readonly pidsLimit: number;
  /** `uid:gid`, never root. */
  readonly user: string;
  /** `none`, or a network name (`bridge`) when package and policy allow it. */
  readonly network: string;
  /** Size of the `/tmp` tmpfs in MiB. */
  readonly tmpfsMb: number;
  /** The command (after the image): the cog arguments. */
  readonly command: readonly string[];
  /** Set `--platform linux/<arch>` (for emulated images). */
  readonly platform?: string;
  /** The engine's log bounds (see {@link containerLogArgs}). */
  readonly log: ContainerLogBounds;
}

/** How much container output the engine keeps on disk for one container. */
export interface ContainerLogBounds {
  /** `docker` or `podman`: their log drivers take different options. */
  readonly engineKind: 'docker' | 'podman';
  /** `--log-opt max-size=<bytes>`: the size at which the log file is rotated (docker) or cut (podman). */
  readonly maxBytes: number;
  /** `--log-opt max-file=<n>` (docker only): rotated files kept, the current one included. */
  readonly maxFiles: number;
}

/**
 * The log flags of `create`, so the engine's own log of a container is bounded whatever the daemon's
 * default driver is. docker: `--log-driver json-file --log-opt max-size=<bytes> --log-opt
 * max-file=<n>` (the json-file driver rotates at max-size and keeps max-file files: at most
 * `maxBytes x maxFiles` bytes). podman: `--log-driver k8s-file --log-opt max-size=<bytes>` (podman's
 * k8s-file driver takes max-size, not max-file; conmon truncates the file when it reaches max-size).
 * Both drivers serve `logs`. Sizes are given in bytes, without a unit, which both CLIs accept.
 */
export function containerLogArgs(b: ContainerLogBounds): string[] {
  if (b.engineKind === 'podman') {
    return ['--log-driver', 'k8s-file', '--log-opt', `max-size=${b.maxBytes}`];
  }
  return [
    '--log-driver',
    'json-file',
    '--log-opt',
    `max-size=${b.maxBytes}`,
    '--log-opt',
    `max-file=${b.maxFiles}`,
  ];
}

/**
 * The `create` argv. The ingest token is passed as `-e HEDDLE_INGEST_TOKEN` (name only) so the
 * engine reads its value from the CLI's environment and the secret never appears in an argv.
 */
export function containerCreateArgs(spec: ContainerCreateSpec): string[] {
  const h = spec.host;
  const args = [
    'create',
    '--name',
    spec.name,
    '--network',
    spec.network,
    '--read-only',
    '--tmpfs',
    `/tmp:rw,noexec,nosuid,size=${spec.tmpfsMb}m`,
    '--memory',
    `${spec.ramMb}m`,
    '--memory-swap',
    `${spec.ramMb}m`,
    '--cpus',
    (spec.cpuPct / 100).toFixed(2),
    '--pids-limit',
    String(spec.pidsLimit),
    '--user',
    spec.user,
    '--security-opt',
    'no-new-privileges',
    '--cap-drop',
    'ALL',
    ...containerLogArgs(spec.log),
    '-v',
    `${h.dataDir}:${CONTAINER_DATA_DIR}:rw`,
    '-e',
    `${CONTAINER_ENV.nodeId}=${h.nodeId}`,
    '-e',
    `${CONTAINER_ENV.dataDir}=${CONTAINER_DATA_DIR}`,
  ];
  if (h.sensorFeedPort !== undefined) args.push('-e', `${CONTAINER_ENV.sensorFeedPort}=${h.sensorFeedPort}`);
  if (h.ingestUrl !== undefined) args.push('-e', `${CONTAINER_ENV.ingestUrl}=${h.ingestUrl}`);
  if (h.ingestToken !== undefined) args.push('-e', CONTAINER_ENV.ingestToken);
  for (const [k, v] of Object.entries(spec.labels).sort(([a], [b]) => (a < b ? -1 : 1))) {
    args.push('--label', `${k}=${v}`);
  }
  if (spec.platform !== undefined) args.push('--platform', spec.platform);
  args.push(spec.image, ...spec.command);
  return args;
}

/** The CLI environment a `create` needs: the ingest token's value, when there is one. */
export function containerCreateEnv(host: HostContract): Record<string, string> {
  return host.ingestToken === undefined ? {} : { [CONTAINER_ENV.ingestToken]: host.ingestToken };
}

/**
 * The cog arguments for a run mode and validated config: `--once` for `once` and `interval` (the
 * adapter re-starts the container for each interval run), nothing for `listener`; then each config
 * value under the cog convention, as two arguments `--<name>` `<value>` in name order (strings as they
 * are, other values as JSON: integers in decimal, booleans as `true`/`false`).
 */
export function cogCommand(runMode: RunMode, values: Readonly<Record<string, JsonValue>>): string[] {
  const out = runMode.type === 'listener' ? [] : ['--once'];
  for (const key of Object.keys(values).sort()) {
    const v = values[key];
    out.push(`--${key}`, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return out;
}
