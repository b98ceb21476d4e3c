/** Where a command writes: injected so that tests can run commands in process and read their output. */
export interface CliIo {
  /** Writes a line to standard output. */
  out(line: string): void;
  /** Writes a line to standard error. */
  err(line: string): void;
  /** The working directory relative paths are resolved against. */
  readonly cwd: string;
}

/** The real process streams. */
export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  cwd: process.cwd(),
};
