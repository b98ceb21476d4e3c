import { HeddleError } from '@heddle/envelope/errors';
import { errnoCode } from './error-text.js';

/** Severity of a log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Extra fields of a log line (JSON values; `undefined` fields are dropped). */
export type LogFields = Record<string, unknown>;

/**
 * Structured logs: one JSON object per line, `{ts, level, msg, ...fields}`, `ts` in ISO 8601 UTC.
 * Secrets never reach it: daemons log node ids and public keys, never a key file's content. Only the
 * fields given are written; nothing is read from the environment or the process.
 */
export class Logger {
  readonly #write: (line: string) => void;
  readonly #now: () => number;

  /** Writes each line through `write` (no newline added); `now` is the clock (milliseconds). */
  constructor(write: (line: string) => void, now: () => number = Date.now) {
    this.#write = write;
    this.#now = now;
  }

  /** Writes one line at `level`. Fields named ts, level or msg are ignored. */
  log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    const line: LogFields = { ts: new Date(this.#now()).toISOString(), level, msg };
    for (const [k, v] of Object.entries(fields)) {
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
