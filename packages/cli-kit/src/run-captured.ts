import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The result of one in-process CLI run: exit code and captured output. */
export interface CliRun {
  /** The exit code `runCli` returned. */
  readonly code: number;
  /** Standard output, lines joined with `\n`. */
  readonly out: string;
  /** Standard error, lines joined with `\n`. */
  readonly err: string;
}

/** The output half of a CLI's io, which {@link runCaptured} supplies. */
export interface CapturingIo {
  /** Writes a line to standard output. */
  out(line: string): void;
  /** Writes a line to standard error. */
  err(line: string): void;
}

/**
 * Runs a CLI in process with captured output (a test helper): calls `run(argv, io)` with an io made
 * of `rest` (the working directory, an environment, ...) and line collectors for `out` and `err`.
 */
export async function runCaptured<Rest extends object>(
  run: (argv: readonly string[], io: CapturingIo & Rest) => number | Promise<number>,
  argv: readonly string[],
  rest: Rest,
): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { ...rest, out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
  const code = await run(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A fresh temporary directory for a test, named `<prefix>XXXXXX` under the system temp directory. */
export function tempDir(prefix = 'heddle-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
