import { execFileSync } from 'node:child_process';
import { closeSync, constants, lstatSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';

/** The named pipes (FIFOs) of an instance's stdout and stderr, in its instance directory. */
export interface NativeFifos {
  readonly stdout: string;
  readonly stderr: string;
}

/** File names of the output FIFOs inside the instance directory. */
export const NATIVE_FIFO_FILES: { readonly stdout: string; readonly stderr: string } = Object.freeze({
  stdout: 'stdout.fifo',
  stderr: 'stderr.fifo',
});

/**
 * The instance's output FIFOs (`<dir>/stdout.fifo`, `<dir>/stderr.fifo`, mode 0600), created with
 * `mkfifo` when missing (anything else at those paths is replaced). Undefined when they cannot be made
 * (no `mkfifo`): runs then write to anonymous pipes and do not survive a crash of the host.
 *
 * Why FIFOs: a program writing to an anonymous pipe whose reader died (the host was killed) gets
 * SIGPIPE at its next write and dies, so a host crash would take every native instance with it. With
 * a named pipe the program also holds a read end of its own (see {@link openForChild}): a write never
 * meets a pipe without reader, it only blocks once the pipe's buffer (64 KiB on Linux) is full while
 * no host reads; a restarted host opens the same FIFO again and resumes reading (what was buffered
 * included). Output is still read by the host and written to the bounded, rotated log files, so a
 * flood of output cannot fill the disk.
 */
export function ensureOutputFifos(dir: string): NativeFifos | undefined {
  const fifos = { stdout: join(dir, NATIVE_FIFO_FILES.stdout), stderr: join(dir, NATIVE_FIFO_FILES.stderr) };
  try {
    for (const path of [fifos.stdout, fifos.stderr]) {
      let ok = false;
      try {
        ok = lstatSync(path).isFIFO();
      } catch {
        ok = false;
      }
      if (ok) continue;
      rmSync(path, { force: true, recursive: true });
      execFileSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' });
    }
    return fifos;
  } catch {
    return undefined;
  }
}

/**
 * A non-blocking reader of one FIFO: `onChunk` gets what is written; {@link ended} resolves at end of
 * file (every writer closed it: the program and whatever it started are gone) or when destroyed.
 */
export class FifoReader {
  /** Resolves when the reader is done. */
  readonly ended: Promise<void>;
  readonly #socket: Socket;

  /** Opens `path` for reading without waiting for a writer. Throws the file system's error. */
  constructor(path: string, onChunk: (chunk: Buffer) => void) {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    this.#socket = new Socket({ fd, readable: true, writable: false });
    this.#socket.on('data', onChunk);
    this.#socket.on('error', () => {});
    this.ended = new Promise((resolve) => this.#socket.once('close', () => resolve()));
  }

  /** Stops reading (a descendant outside the group still holds the write end). */
  destroy(): void {
    this.#socket.destroy();
  }
}

/**
 * The descriptors a run's child gets for one FIFO, opened after the host's {@link FifoReader} (so the
 * write open does not wait): a blocking write end (its stdout or stderr) and a read end it only holds
 * (so that its writes never meet a pipe without reader). Close both in the host after the spawn.
 */
export function openForChild(path: string): { readonly write: number; readonly keep: number } {
  const write = openSync(path, constants.O_WRONLY);
  try {
    return { write, keep: openSync(path, constants.O_RDONLY | constants.O_NONBLOCK) };
  } catch (err) {
    closeSync(write);
    throw err;
  }
}
