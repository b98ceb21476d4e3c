/** Where a command writes: injected so that tests can run commands in process and read their output. */
export interface CliIo {
  /** Writes a line to standard output. */
  out(line: string): void;
  /** Writes a line to standard error. */
  err(line: string): void;
  /** The working directory relative paths are resolved against. */
  readonly cwd: string;
  /** Environment variables (`HEDDLE_SEED_HOME`); absent: the process environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Aborted when the operator interrupts (`simulator` stops then); absent: SIGINT/SIGTERM. */
  readonly signal?: AbortSignal;
  /**
   * Registers a secret (the Seed's token) for the rest of the run: every later line written through
   * this io has it replaced by `[redacted]`. Set by `runCli`.
   */
  secret?(value: string): void;
}

/** The real process streams. */
export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  cwd: process.cwd(),
  env: process.env,
};

/** What replaces a secret in any output. */
export const REDACTED = '[redacted]';

/**
 * Wraps `io` so that every registered secret is replaced by {@link REDACTED} in every line written
 * (the last line of defence: commands never print the token in the first place).
 */
export function redactingIo(io: CliIo): CliIo {
  const secrets = new Set<string>();
  const scrub = (line: string): string => {
    let s = line;
    for (const v of secrets) s = s.split(v).join(REDACTED);
    return s;
  };
  return {
    out: (line) => io.out(scrub(line)),
    err: (line) => io.err(scrub(line)),
    cwd: io.cwd,
    ...(io.env === undefined ? {} : { env: io.env }),
    ...(io.signal === undefined ? {} : { signal: io.signal }),
    secret: (value) => {
      if (value.length >= 8) secrets.add(value);
    },
  };
}

/** Prints `value` as one line of JSON when `json` is set, otherwise the human lines. */
export function emit(io: CliIo, json: boolean, value: unknown, human: () => string[]): void {
  if (json) io.out(JSON.stringify(value));
  else for (const line of human()) io.out(line);
}
