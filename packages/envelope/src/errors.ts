/**
 * Base class of every error Heddle throws on purpose. `code` is a stable, documented string that
 * callers may switch on; the message is for people and may change.
 */
export class HeddleError extends Error {
  /** Stable machine-readable code, such as `invalid_json` or `key_file_permissions`. */
  readonly code: string;
  /** The input field the error is about (a dotted path), when there is one. */
  readonly field: string | undefined;

  constructor(code: string, message: string, options?: { field?: string | undefined; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.field = options?.field;
  }
}

/** An error from `@heddle/envelope`: malformed keys, key files, JSON or digests. */
export class EnvelopeError extends HeddleError {}

/** The message of a thrown value: `err.message` for an `Error`, else `String(err)`. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The string `code` of a thrown `Error` (a Node.js system error's `ENOENT`, `EACCES`, ...), or undefined. */
export function errnoCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}
