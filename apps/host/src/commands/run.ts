import { parseCommandArgs, stringFlag } from '../args.js';
import { ExitCode } from '../cli-error.js';
import { loadHostConfig } from '../config.js';
import { type RunningHost, startHost } from '../daemon.js';
import type { CliIo } from '../io.js';
import { errorFields, Logger } from '../logger.js';
import { configPath } from './id.js';

/**
 * `heddle-host run [--config F]`: runs the daemon until SIGTERM or SIGINT (graceful shutdown, exit 0).
 * SIGHUP re-reads the revocation list. Logs one JSON object per line to standard output. A config that
 * cannot be used is refused before anything listens (exit 3, the field named).
 */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const a = parseCommandArgs('run', args, { config: 'string' });
  const log = new Logger((line) => io.out(line));
  let host: RunningHost;
  try {
    const config = loadHostConfig(configPath(stringFlag(a, 'config'), io));
    host = await startHost(config, log);
  } catch (err) {
    log.error('refusing to start', errorFields(err));
    throw err;
  }
  const onUncaught = (err: unknown): void =>
    log.error('unexpected error (the daemon keeps running)', errorFields(err));
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const onHup = (): void => {
    log.info('SIGHUP: re-reading the revocation list', {});
    void host.checkRevocations('SIGHUP');
  };
  process.on('SIGHUP', onHup);
  const code = await new Promise<number>((resolveExit) => {
    let stopping = false;
    const onStop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log.warn('second signal during shutdown: exiting now', { signal });
        process.exit(ExitCode.failed);
      }
      stopping = true;
      host.stop(signal).then(
        () => resolveExit(ExitCode.ok),
        (err: unknown) => {
          log.error('shutdown failed', errorFields(err));
          resolveExit(ExitCode.failed);
        },
      );
    };
    process.on('SIGTERM', onStop);
    process.on('SIGINT', onStop);
  });
  process.off('SIGHUP', onHup);
  log.info('stopped', { exit_code: code });
  // Anything an adapter left behind (a timer, a pipe) must not keep a stopped daemon alive.
  setTimeout(() => process.exit(code), 2_000).unref();
  return code;
}
