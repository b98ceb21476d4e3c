// Types of wasi-preview1.mjs (a plain script the runner imports; tests import it too).

/** WASI errno values (preview1) that the implementation returns. */
export declare const E: Readonly<Record<string, number>>;

/** Thrown by proc_exit; the runner exits with `code`. */
export declare class WasiExit extends Error {
  readonly code: number;
  constructor(code: number);
}

/** Blocks the calling thread for `ms` milliseconds. */
export declare function sleepSync(ms: number): void;

/** Writes all of `buf` to `fd`, waiting while a non-blocking pipe is full. */
export declare function writeAllSync(fd: number, buf: Uint8Array): void;

/** A guest memory: what the implementation reads of a `WebAssembly.Memory`. */
export interface GuestMemory {
  readonly buffer: ArrayBuffer;
}

/** Options of {@link createPreview1}. */
export interface Preview1Options {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Guest path to host directory. */
  readonly preopens: Readonly<Record<string, string>>;
  readonly stdout: number;
  readonly stderr: number;
  /** The guest's memory, asked for on every call. */
  readonly getMemory: () => GuestMemory;
}

/** The `wasi_snapshot_preview1` import object. */
export declare function createPreview1(
  options: Preview1Options,
): Record<string, (...args: Array<number | bigint>) => number>;
