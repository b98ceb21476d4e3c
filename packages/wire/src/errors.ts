import { HeddleError } from '@heddle/envelope';

/**
 * Stable codes of a {@link WireError}:
 * - `closed`: the connection closed (or was never open) while the operation waited;
 * - `timeout`: a fetch request got no answer in time (after its retries);
 * - `fetch_refused`: the controller refused a fetch request (`fetch_refused` frame);
 * - `manifest_mismatch`: the envelope served does not hash to the requested manifest hash;
 * - `manifest_invalid`: the envelope served does not parse as a package envelope;
 * - `too_large`: a size claim (a file, the package total, a piece map) exceeds the caller's limits;
 * - `artifact_mismatch`: a file's piece map does not match the signed file entry (wrong file);
 * - `piece_rejected`: a piece failed its length or BLAKE3 check (the field names the file and piece);
 * - `destination`: the destination directory exists and is not empty, or could not be written;
 * - `protocol`: the peer broke the frame protocol;
 * - `invalid_argument`: a caller passed an unusable argument (a bug of the caller).
 */
export type WireErrorCode =
  | 'closed'
  | 'timeout'
  | 'fetch_refused'
  | 'manifest_mismatch'
  | 'manifest_invalid'
  | 'too_large'
  | 'artifact_mismatch'
  | 'piece_rejected'
  | 'destination'
  | 'protocol'
  | 'invalid_argument';

/** An error from `@heddle/wire`, with a stable {@link WireErrorCode} and the field it is about. */
export class WireError extends HeddleError {
  /** Why, one of {@link WireErrorCode}. */
  declare readonly code: WireErrorCode;

  constructor(code: WireErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(code, `${code}: ${message}`, options);
  }
}
