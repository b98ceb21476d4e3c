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
