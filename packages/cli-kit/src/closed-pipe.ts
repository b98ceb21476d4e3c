import { errnoCode } from './error-text.js';
/** A stream whose errors {@link exitQuietlyOnClosedPipe} watches (`process.stdout`, `process.stderr`). */
export interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

let daemonRunning = false;

/**
 * Tells {@link exitQuietlyOnClosedPipe} that a daemon now runs (`runUntilSignal` does this): from then
 * on a closed pipe is ignored (the lines are lost) instead of ending the process, so that a daemon
 * never stops, nor leaves its workloads unmanaged, because whoever read its logs went away.
 */
export function keepRunningOnClosedPipe(): void {
  daemonRunning = true;
}

/**
 * Makes a closed pipe end the program quietly: when standard output or standard error is a pipe
 * whose reader went away (`heddle chain verify f | head -c1`, `heddle --help | head -1`), the next
 * write fails with EPIPE, and the process then exits with 0 at once, with no stack trace and nothing
 * more written (a daemon, once {@link keepRunningOnClosedPipe} was called, keeps running instead).
 * Any other stream error is rethrown (it stays a crash). Call it once, first thing, in a CLI's entry
 * point.
 */
export function exitQuietlyOnClosedPipe(
  streams: readonly ErrorEmitter[] = [process.stdout, process.stderr],
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  for (const stream of streams) {
    stream.on('error', (err) => {
      if (errnoCode(err) !== 'EPIPE') throw err;
      if (!daemonRunning) exit(0);
    });
  }
}
