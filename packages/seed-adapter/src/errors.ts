import { HeddleError } from '@heddle/envelope';

/**
 * Stable codes of {@link SeedError}:
 * - `not_paired`: the Seed answered 401 or 403 (no token, or a token it no longer accepts);
 * - `seed_error`: the Seed refused with an `{error}` body (its message is carried, bounded);
 * - `tls_pin`: the Seed's certificate key is not the pinned one (SPKI SHA-256);
 * - `insecure`: plain HTTP to an address that is neither loopback nor the USB link, or not allowed;
 * - `timeout`: no answer in time;
 * - `unreachable`: the connection failed;
 * - `bad_answer`: an answer that is not the documented JSON, too large, or a redirect;
 * - `invalid_argument`: a bad id, path or option on this side;
 * - `credentials`: the token file is missing, unreadable or readable by others.
 */
export type SeedErrorCode =
  | 'not_paired'
  | 'seed_error'
  | 'tls_pin'
  | 'insecure'
  | 'timeout'
  | 'unreachable'
  | 'bad_answer'
  | 'invalid_argument'
  | 'credentials';

/** An error talking to a Seed. Its message never contains the bearer token. */
export class SeedError extends HeddleError {
  declare readonly code: SeedErrorCode;
  /** The HTTP status, when the Seed answered. */
  readonly status: number | undefined;

  constructor(
    code: SeedErrorCode,
    message: string,
    options: { field?: string; cause?: unknown; status?: number } = {},
  ) {
    super(code, message, {
      ...(options.field === undefined ? {} : { field: options.field }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.status = options.status;
  }
}
