/** Where a command writes: injected so that tests can run commands in process and read their output. */
export interface CliIo {
  /** Writes a line to standard output. */
  out(line: string): void;
  /** Writes a line to standard error. */
  err(line: string): void;
  /** The working directory relative paths are resolved against. */
  readonly cwd: string;
  /** Whether standard output is a terminal (colour is used only then). Absent: not a terminal. */
  readonly isTty?: boolean;
  /** Whether standard error is a terminal (a progress bar redraws in place only then). Absent: not. */
  readonly errIsTty?: boolean;
  /** The terminal width in columns, when known. */
  readonly cols?: number;
  /** Environment variables (`NO_COLOR`, `HEDDLE_HOME`, `HOME`); absent: none. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Writes raw text (no newline added) to standard error: a progress bar redrawn with `\r`. */
  errRaw?(text: string): void;
  /** Aborted when the operator interrupts (SIGINT); long-running commands such as `logs --follow` stop then. */
  readonly signal?: AbortSignal;
}

/** The real process streams. */
export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  cwd: process.cwd(),
  isTty: process.stdout.isTTY === true,
  errIsTty: process.stderr.isTTY === true,
  ...(process.stdout.columns === undefined ? {} : { cols: process.stdout.columns }),
  env: process.env,
  errRaw: (text) => process.stderr.write(text),
};

/** Prints `value` as one line of JSON when `json` is set, otherwise the human lines. */
export function emit(io: CliIo, json: boolean, value: unknown, human: () => string[]): void {
  if (json) io.out(JSON.stringify(value));
  else for (const line of human()) io.out(line);
}
