import type { JsonValue } from '@heddle/envelope';
import { RuntimeError } from '../errors.js';
import type { HostContract, RunMode } from '../workload.js';

/** Where the instance's data directory appears inside the guest (the only preopened directory). */
export const WASI_DATA_DIR = '/data';

/**
 * The guest's argv under the cog convention: the program name, then the run mode (`--once`,
 * `--interval N`, nothing for a listener, or `--console <command>` for a console run), then each config
 * value as two arguments `--<name>` `<value>` in field-name order (booleans as `true`/`false`). Refuses
 * (`invalid_config`, naming the field) a value holding a NUL character or a non-scalar value.
 */
export function wasiArgv(
  program: string,
  mode: RunMode | { readonly type: 'console'; readonly command: string },
  values: Readonly<Record<string, JsonValue>>,
): string[] {
  const argv = [program];
  if (mode.type === 'once') argv.push('--once');
  else if (mode.type === 'interval') argv.push('--interval', String(mode.secs));
  else if (mode.type === 'console') argv.push('--console', mode.command);
  for (const name of Object.keys(values).sort()) {
    const value = values[name];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new RuntimeError('invalid_config', `config.${name}: expected a string, number or boolean`, {
        field: `config.${name}`,
      });
    }
    const text = String(value);
    if (text.includes('\0')) {
      throw new RuntimeError('invalid_config', `config.${name}: must not contain NUL`, {
        field: `config.${name}`,
      });
    }
    argv.push(`--${name}`, text);
  }
  return argv;
}

/**
 * The guest's whole environment, from the host contract only: `HEDDLE_NODE_ID`, `HEDDLE_INSTANCE_ID`,
 * `HEDDLE_DATA_DIR` (always `/data`, the guest path of the data directory), and
 * `HEDDLE_SENSOR_FEED_PORT`, `HEDDLE_INGEST_URL`, `HEDDLE_INGEST_TOKEN` when the contract has them.
 */
export function wasiEnv(host: HostContract, instanceId: string): Record<string, string> {
  const env: Record<string, string> = {
    HEDDLE_NODE_ID: host.nodeId,
    HEDDLE_INSTANCE_ID: instanceId,
    HEDDLE_DATA_DIR: WASI_DATA_DIR,
  };
  if (host.sensorFeedPort !== undefined) env.HEDDLE_SENSOR_FEED_PORT = String(host.sensorFeedPort);
  if (host.ingestUrl !== undefined) env.HEDDLE_INGEST_URL = host.ingestUrl;
  if (host.ingestToken !== undefined) env.HEDDLE_INGEST_TOKEN = host.ingestToken;
  for (const [k, v] of Object.entries(env)) {
    if (v.includes('\0')) {
      throw new RuntimeError('invalid_config', `host.${k}: must not contain NUL`, { field: `host.${k}` });
    }
  }
  return env;
}
