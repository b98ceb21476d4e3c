import { closeSync, existsSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';

/** Default size of one log file before rotation: 1 MiB. */
export const DEFAULT_LOG_FILE_BYTES: number = 1024 * 1024;

/** Default number of log files kept (the current one and the rotated ones): 3. */
export const DEFAULT_LOG_FILES = 3;

/**
 * An append-only log file rotated by size: `path` is current, `path.1` the previous, up to
 * `path.<files-1>`; the oldest is deleted. Disk use is bounded by `maxBytes * files` (plus one chunk).
 * Writes are synchronous so that a flood of output cannot queue in memory.
 */
export class RotatingLog {
  readonly path: string;
  readonly maxBytes: number;
  readonly files: number;
  #fd: number | undefined;
  #size = 0;

  /** Opens (appends to) `path`. */
  constructor(path: string, maxBytes: number = DEFAULT_LOG_FILE_BYTES, files: number = DEFAULT_LOG_FILES) {
    this.path = path;
    this.maxBytes = Math.max(1024, Math.floor(maxBytes));
    this.files = Math.max(1, Math.floor(files));
    this.#open();
  }

  /** Appends a chunk, rotating first when the current file would pass `maxBytes`. */
  write(chunk: Uint8Array): void {
    if (this.#fd === undefined) return;
    if (this.#size > 0 && this.#size + chunk.length > this.maxBytes) this.#rotate();
    let data = chunk;
    // A single chunk larger than a whole file keeps only its tail.
    if (data.length > this.maxBytes) data = data.subarray(data.length - this.maxBytes);
    let off = 0;
    while (off < data.length) off += writeSync(this.#fd, data, off, data.length - off);
    this.#size += data.length;
  }

  /** Closes the file; later writes are ignored. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  /** The log files that exist, oldest first. */
  paths(): string[] {
    const out: string[] = [];
    for (let i = this.files - 1; i >= 1; i--)
      if (existsSync(`${this.path}.${i}`)) out.push(`${this.path}.${i}`);
    if (existsSync(this.path)) out.push(this.path);
    return out;
  }

  #open(): void {
    this.#fd = openSync(this.path, 'a', 0o600);
    this.#size = statSync(this.path).size;
  }

  #rotate(): void {
    this.close();
    if (this.files === 1) {
      rmSync(this.path, { force: true });
    } else {
      rmSync(`${this.path}.${this.files - 1}`, { force: true });
      for (let i = this.files - 2; i >= 1; i--) {
        if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      }
      renameSync(this.path, `${this.path}.1`);
    }
    this.#open();
  }
}
