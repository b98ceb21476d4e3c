import { errorFields, Logger, parseArgv, runUntilSignal } from '@heddle/cli-kit';
import { RUN } from '../command-defs.js';
import { loadHostConfig } from '../config.js';
import { type RunningHost, startHost } from '../daemon.js';
import type { CliIo } from '../io.js';
import { configPath } from './id.js';

/**
 * `heddle-host run [--config F]`: runs the daemon until SIGTERM or SIGINT (graceful shutdown, exit 0).
 * SIGHUP re-reads the revocation list. Logs one JSON object per line to standard output. A config that
 * cannot be used is refused before anything listens (exit 3, the field named).
 */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseArgv('heddle-host', RUN, args);
  const log = new Logger((line) => io.out(line));
  let host: RunningHost;
  try {
    const config = loadHostConfig(configPath(a.strings.config, io));
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
