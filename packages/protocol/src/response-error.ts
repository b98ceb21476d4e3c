import { HeddleError } from '@heddle/envelope';

const RESPONSE_ERROR_CODES_VALUE = [
  'invalid_response',
  'signature',
  'key_mismatch',
  'responder_mismatch',
  'nonce_mismatch',
  'method_mismatch',
  'expired',
] as const;
/**
 * Why a controller rejected a host's response (stable strings):
 * - `invalid_response`: malformed envelope, oversized payload, not strict JSON, schema or version;
 * - `signature`: bad key or signature encoding, or the signature does not verify;
 * - `key_mismatch`: signed by another key than the one expected for that node;
 * - `responder_mismatch`: `responder` is not the node id of the signing key;
 * - `nonce_mismatch`: `request_nonce` is not the nonce of the request sent;
 * - `method_mismatch`: `method` is not the method of the request sent;
 * - `expired`: it arrived after the request's expiry plus the clock skew (only when `now` is given).
 */
export const RESPONSE_ERROR_CODES: typeof RESPONSE_ERROR_CODES_VALUE =
  Object.freeze(RESPONSE_ERROR_CODES_VALUE);

/** One of {@link RESPONSE_ERROR_CODES}. */
export type ResponseErrorCode = (typeof RESPONSE_ERROR_CODES)[number];

/**
 * A response the controller cannot accept. For a state-changing call this makes the call
 * Indeterminate (the host may have acted), never a refusal.
 */
export class ResponseError extends HeddleError {
  /** Why, one of {@link RESPONSE_ERROR_CODES}. */
  declare readonly code: ResponseErrorCode;

  constructor(code: ResponseErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(code, `${code}: ${message}`, options);
  }
}
