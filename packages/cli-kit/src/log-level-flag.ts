import { usageError } from './cli-error.js';
import type { FlagDef } from './command-def.js';
import { isLogLevel, LOG_LEVELS, type LogLevel } from './logger.js';

/** `--log-level <level>` of a daemon's run command: overrides its config's `log_level`. */
export const LOG_LEVEL_FLAG: FlagDef = Object.freeze({
  name: 'log-level',
  kind: 'string',
  value: '<level>',
  description: `least severe log line written: ${LOG_LEVELS.join(', ')} (default: the config's log_level, else info)`,
});

/**
 * The level a daemon logs at: `--log-level` when given (a usage error, exit 2, naming the flag when
 * it is not a level), else the configured one.
 */
export function chooseLogLevel(flag: string | undefined, configured: LogLevel): LogLevel {
  if (flag === undefined) return configured;
  if (!isLogLevel(flag)) {
    throw usageError(
      `--log-level: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(flag)}`,
      'log-level',
    );
  }
  return flag;
}
