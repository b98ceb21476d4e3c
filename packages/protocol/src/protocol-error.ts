import { HeddleError } from '@heddle/envelope';

/**
 * Codes of a {@link ProtocolError}, thrown by the side that builds a message (never sent on the wire):
 * - `unknown_method`: `createRequest` was given a method that is not a control method;
 * - `invalid_request`: a request field (named in `field`) is malformed;
 * - `invalid_response`: a response `signResponse` was asked to sign is malformed;
 * - `invalid_body`: a method body does not match the method's body schema (`field` is `body.<path>`);
 * - `invalid_answer`: a host's verified `ok` answer does not match the method's answer schema
 *   (`field` is `result.<path>`).
 */
export type ProtocolErrorCode =
  | 'unknown_method'
  | 'invalid_request'
  | 'invalid_response'
  | 'invalid_body'
  | 'invalid_answer';

/** An error of `@heddle/protocol`: a control message or a method body or answer that is malformed. */
export class ProtocolError extends HeddleError {
  /** Why, one of {@link ProtocolErrorCode}. */
  declare readonly code: ProtocolErrorCode;

  constructor(code: ProtocolErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(code, message, options);
  }
}
