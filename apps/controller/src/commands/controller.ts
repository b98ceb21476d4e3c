import { join } from 'node:path';
import { parseCommandArgs } from '../args.js';
import { ExitCode, usageError } from '../cli-error.js';
import { loadControllerConfig } from '../controller-config.js';
import { type RunningController, startController } from '../daemon.js';
import { CONTROLLER_CONFIG_FILE, homeDir } from '../home.js';
import type { CliIo } from '../io.js';
import { errorFields, Logger } from '../logger.js';

const USAGE = 'run [--home D]';

/**
 * `heddle controller run [--home D]`: runs the controller daemon until SIGTERM or SIGINT (graceful
 * shutdown, exit 0). Logs one JSON object per line to standard output. A config that cannot be used is
 * refused before anything listens (exit 3, the field named).
 */
export async function controller(args: readonly string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseCommandArgs(
    'controller',
    args,
    { home: 'string' },
    {
      min: 1,
      max: 1,
      names: USAGE,
    },
  );
  if (positionals[0] !== 'run') throw usageError(`usage: heddle controller ${USAGE}`);
  const home = homeDir(flags.home as string | undefined, io);
  const log = new Logger((line) => io.out(line));
  let running: RunningController;
  try {
    const config = loadControllerConfig(join(home, CONTROLLER_CONFIG_FILE));
    running = await startController(config, log);
  } catch (err) {
    log.error('refusing to start', errorFields(err));
    throw err;
  }
  const onUncaught = (err: unknown): void =>
    log.error('unexpected error (the daemon keeps running)', errorFields(err));
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const code = await new Promise<number>((resolveExit) => {
    let stopping = false;
    const onStop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log.warn('second signal during shutdown: exiting now', { signal });
        process.exit(ExitCode.checkFailed);
      }
      stopping = true;
      running.stop(signal).then(
        () => resolveExit(ExitCode.ok),
        (err: unknown) => {
          log.error('shutdown failed', errorFields(err));
          resolveExit(ExitCode.checkFailed);
        },
      );
    };
    process.on('SIGTERM', onStop);
    process.on('SIGINT', onStop);
  });
  log.info('stopped', { exit_code: code });
  // Anything left behind (a timer, a socket) must not keep a stopped daemon alive.
  setTimeout(() => process.exit(code), 2_000).unref();
  return code;
}
