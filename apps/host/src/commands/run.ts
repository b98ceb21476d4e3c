import { chooseLogLevel, errorFields, Logger, parseArgv, runUntilSignal } from '@heddle/cli-kit';
import { RUN } from '../command-defs.js';
import { loadHostConfig } from '../config.js';
import { type RunningHost, startHost } from '../daemon.js';
import type { CliIo } from '../io.js';
import { configPath } from './id.js';

/**
 * `heddle-host run [--config F] [--log-level L]`: runs the daemon until SIGTERM or SIGINT (graceful
 * shutdown, exit 0). SIGHUP re-reads the revocation list. Logs one JSON object per line to standard
 * output, at `--log-level`, else the config's `log_level`, else info. A config that
 * cannot be used is refused before anything listens (exit 3, the field named).
 */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseArgv('heddle-host', RUN, args);
  const flagLevel = a.strings['log-level'];
  const log = new Logger((line) => io.out(line), Date.now, chooseLogLevel(flagLevel, 'info'));
  let host: RunningHost;
  try {
    const config = loadHostConfig(configPath(a.strings.config, io));
    log.level = chooseLogLevel(flagLevel, config.logLevel);
    host = await startHost(config, log);
  } catch (err) {
    log.error('refusing to start', errorFields(err));
    throw err;
  }
  const onHup = (): void => {
    log.info('SIGHUP: re-reading the revocation list', {});
    void host.checkRevocations('SIGHUP');
  };
  process.on('SIGHUP', onHup);
  try {
    return await runUntilSignal((signal) => host.stop(signal), log);
  } finally {
    process.off('SIGHUP', onHup);
  }
}
