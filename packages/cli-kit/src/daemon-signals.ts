import { ExitCode } from './cli-error.js';
import { keepRunningOnClosedPipe } from './closed-pipe.js';
import { errorFields, type Logger } from './logger.js';

/**
 * Keeps a started daemon running until SIGTERM or SIGINT, then stops it gracefully and resolves to
 * the exit code: 0 when `stop` resolved, 1 when it failed (logged as `shutdown failed`). A second
 * signal during shutdown exits the process at once with 1. Uncaught exceptions and unhandled
 * rejections are logged (`unexpected error (the daemon keeps running)`) instead of crashing the
 * daemon. Logs `stopped` with the exit code, then arms an unref'd 2 s timer that exits the process,
 * so that anything left behind (a timer, a socket, a pipe) cannot keep a stopped daemon alive. A
 * closed standard output no longer ends the process (`keepRunningOnClosedPipe`).
 */
export async function runUntilSignal(
  stop: (signal: NodeJS.Signals) => Promise<void>,
  log: Logger,
): Promise<number> {
  const onUncaught = (err: unknown): void =>
    log.error('unexpected error (the daemon keeps running)', errorFields(err));
  keepRunningOnClosedPipe();
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const code = await new Promise<number>((resolveExit) => {
    let stopping = false;
    const onStop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log.warn('second signal during shutdown: exiting now', { signal });
        process.exit(ExitCode.failed);
      }
      stopping = true;
      stop(signal).then(
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
  log.info('stopped', { exit_code: code });
  setTimeout(() => process.exit(code), 2_000).unref();
  return code;
}
