import { HeddleError } from '@heddle/envelope/errors';
import { errnoCode } from './error-text.js';

/** The levels, least severe first: a logger at level L writes L and every level after it. */
export const LOG_LEVELS: readonly ['debug', 'info', 'warn', 'error'] = Object.freeze([
  'debug',
  'info',
  'warn',
  'error',
] as const);

/** Severity of a log line. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The level daemons log at unless told otherwise (`--log-level`, `log_level`). */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

/** True when `value` is one of {@link LOG_LEVELS}. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/** Extra fields of a log line (JSON values; `undefined` fields are dropped). */
export type LogFields = Record<string, unknown>;

/**
 * Structured logs: one JSON object per line, `{ts, level, msg, ...fields}`, `ts` in ISO 8601 UTC.
 * Lines below the logger's `level` are dropped before anything is serialised; `child` binds fields
 * (a request id) to every line of a derived logger that shares the level and the sink.
 * Secrets never reach it: daemons log node ids and public keys, never a key file's content. Only the
 * fields given are written; nothing is read from the environment or the process.
 */
export class Logger {
  readonly #write: (line: string) => void;
  readonly #now: () => number;
  #bound: LogFields;
  #threshold: { rank: number };

  /**
   * Writes each line through `write` (no newline added); `now` is the clock (milliseconds); `level`
   * the least severe level written (default `debug`: everything).
   */
  constructor(write: (line: string) => void, now: () => number = Date.now, level: LogLevel = 'debug') {
    this.#write = write;
    this.#now = now;
    this.#bound = {};
    this.#threshold = { rank: LOG_LEVELS.indexOf(level) };
  }

  /** The least severe level written; setting it applies to this logger and every child of it. */
  get level(): LogLevel {
    // cast: the rank is always an index of LOG_LEVELS (set from indexOf of a LogLevel).
    return LOG_LEVELS[this.#threshold.rank] as LogLevel;
  }

  set level(level: LogLevel) {
    this.#threshold.rank = LOG_LEVELS.indexOf(level);
  }

  /** True when a line at `level` would be written (to skip building costly fields). */
  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= this.#threshold.rank;
  }

  /** A logger writing to the same sink at the same (shared) level, with `fields` on every line. */
  child(fields: LogFields): Logger {
    const c = new Logger(this.#write, this.#now);
    c.#threshold = this.#threshold;
    c.#bound = { ...this.#bound, ...fields };
    return c;
  }

  /** Writes one line at `level` (nothing below the logger's level). Fields named ts, level or msg are ignored. */
  log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (!this.enabled(level)) return;
    const line: LogFields = { ts: new Date(this.#now()).toISOString(), level, msg };
    for (const [k, v] of Object.entries({ ...this.#bound, ...fields })) {
      if (v !== undefined && !(k in line)) line[k] = v;
    }
    let text: string;
    try {
      text = JSON.stringify(line);
    } catch {
      text = JSON.stringify({ ts: line.ts, level, msg, note: 'fields could not be serialised' });
    }
    this.#write(text);
  }

  /** A debug line (dropped unless the level is `debug`). */
  debug(msg: string, fields?: LogFields): void {
    this.log('debug', msg, fields);
  }

  /** An info line. */
  info(msg: string, fields?: LogFields): void {
    this.log('info', msg, fields);
  }

  /** A warning line. */
  warn(msg: string, fields?: LogFields): void {
    this.log('warn', msg, fields);
  }

  /** An error line. */
  error(msg: string, fields?: LogFields): void {
    this.log('error', msg, fields);
  }
}

/** The loggable fields of an error: its code, field and message (a stack only for unexpected ones). */
export function errorFields(err: unknown): LogFields {
  if (err instanceof HeddleError) {
    return { error_code: err.code, error_field: err.field, error: err.message };
  }
  if (err instanceof Error) {
    return { error_code: errnoCode(err), error: err.message, stack: err.stack };
  }
  return { error: String(err) };
}
