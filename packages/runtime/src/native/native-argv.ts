import type { JsonValue } from '@heddle/envelope';
import { RuntimeError } from '../errors.js';
import type { HostContract, RunMode } from '../workload.js';

/**
 * The fixed `PATH` a native instance gets (nothing is inherited from the host's environment). Scripts
 * need it to find `sleep`, `date` and the like; it names system directories only.
 */
export const NATIVE_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Longest config value passed in argv (bytes of UTF-8). */
export const MAX_NATIVE_ARG_BYTES: number = 64 * 1024;

/**
 * The config arguments of a native instance, after validation against the cog's schema: for each field
 * in sorted name order, `--<field>` followed by its value as one argv element (strings and enums as they
 * are, integers in decimal, booleans as `true`/`false`). Field names match `[a-z][a-z0-9_]{0,63}` (the
 * schema guarantees it), so an argument can never be mistaken for another flag's name, and values are
 * separate argv elements (never a shell), so no quoting or injection is possible. A value containing
 * a NUL byte cannot be passed in argv and is refused (`invalid_config`).
 */
export function nativeConfigArgs(values: Readonly<Record<string, JsonValue>>): string[] {
  const out: string[] = [];
  for (const key of Object.keys(values).sort()) {
    const value = values[key];
    const field = `config.${key}`;
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(key)) {
      throw new RuntimeError('invalid_config', `${field}: not a valid config field name`, { field });
    }
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value);
    else if (typeof value === 'boolean') text = value ? 'true' : 'false';
    else
      throw new RuntimeError('invalid_config', `${field}: expected a string, integer or boolean`, { field });
    if (text.includes('\0')) {
      throw new RuntimeError('invalid_config', `${field}: contains a NUL byte`, { field });
    }
    if (Buffer.byteLength(text) > MAX_NATIVE_ARG_BYTES) {
      throw new RuntimeError('invalid_config', `${field}: longer than ${MAX_NATIVE_ARG_BYTES} bytes`, {
        field,
      });
    }
    out.push(`--${key}`, text);
  }
  return out;
}

/**
 * The run-mode arguments of the cog convention: `--once` for `once`, `--interval <secs>` for
 * `interval` (the host also re-runs the program every `secs` after a run ends, so a cog may either
 * loop itself or run once per call), nothing for a `listener`.
 */
export function nativeModeArgs(runMode: RunMode): string[] {
  switch (runMode.type) {
    case 'once':
      return ['--once'];
    case 'interval':
      return ['--interval', String(runMode.secs)];
    case 'listener':
      return [];
  }
}

/**
 * The whole environment of a native instance: the fixed {@link NATIVE_PATH} and the host contract,
 * nothing else. `HEDDLE_SENSOR_FEED_PORT`, `HEDDLE_INGEST_URL` and `HEDDLE_INGEST_TOKEN` are set only
 * when the contract has them.
 */
export function nativeEnvironment(host: HostContract, instanceId: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: NATIVE_PATH,
    HEDDLE_NODE_ID: host.nodeId,
    HEDDLE_DATA_DIR: host.dataDir,
    HEDDLE_INSTANCE_ID: instanceId,
  };
  if (host.sensorFeedPort !== undefined) env.HEDDLE_SENSOR_FEED_PORT = String(host.sensorFeedPort);
  if (host.ingestUrl !== undefined) env.HEDDLE_INGEST_URL = host.ingestUrl;
  if (host.ingestToken !== undefined) env.HEDDLE_INGEST_TOKEN = host.ingestToken;
  for (const [k, v] of Object.entries(env)) {
    if (v.includes('\0')) {
      throw new RuntimeError('invalid_config', `host.${k}: contains a NUL byte`, { field: `host.${k}` });
    }
  }
  return env;
}
