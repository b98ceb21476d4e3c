import { HeddleError } from '@heddle/envelope';
import type { VerifyFailure } from './verify-types.js';

/**
 * The stable codes of {@link ChainError}. Callers may switch on them; the messages are for people.
 *
 * - `invalid_source` / `invalid_kind`: not a dotted lower-case identifier.
 * - `invalid_payload`: the payload cannot be encoded as canonical JSON (floats, cycles, too deep, too big...).
 * - `invalid_timestamp`: the clock returned something other than a non-negative safe integer.
 * - `invalid_argument`: a seq, size or range outside the chain, or a malformed hash argument.
 * - `chain_read_only`: append on a chain opened read-only.
 * - `chain_closed`: append after `close()`.
 * - `chain_store_failed`: a write or fsync failed; the chain refuses further appends (reopen it).
 * - `not_a_chain_file`: the file does not start with the chain file header.
 * - `chain_file_missing`: the chain file does not exist (and may not be created).
 * - `chain_locked`: another live process (or another store in this one) has the file open for writing.
 * - `chain_corrupt`: stored events fail verification ({@link ChainCorruptError}).
 * - `checkpoint_malformed`, `checkpoint_signature`, `checkpoint_key_mismatch`: see {@link CheckpointError}.
 */
export type ChainErrorCode =
  | 'invalid_source'
  | 'invalid_kind'
  | 'invalid_payload'
  | 'invalid_timestamp'
  | 'invalid_argument'
  | 'chain_read_only'
  | 'chain_closed'
  | 'chain_store_failed'
  | 'not_a_chain_file'
  | 'chain_file_missing'
  | 'chain_locked'
  | 'chain_corrupt'
  | 'checkpoint_malformed'
  | 'checkpoint_signature'
  | 'checkpoint_key_mismatch';

/** An error from `@heddle/chain`. `code` is one of {@link ChainErrorCode}. */
export class ChainError extends HeddleError {
  /** The stable code (narrowed from HeddleError's string). */
  declare readonly code: ChainErrorCode;

  constructor(
    code: ChainErrorCode,
    message: string,
    options?: { field?: string | undefined; cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/**
 * Stored events failed verification when a chain was opened: corruption or tampering before the tail,
 * which is never repaired silently. `failure` names the event (seq, and line and byte offset for a
 * file) and what broke. Code `chain_corrupt`.
 */
export class ChainCorruptError extends ChainError {
  /** The first failure found. */
  readonly failure: VerifyFailure;

  constructor(failure: VerifyFailure, where?: string) {
    super('chain_corrupt', `${where === undefined ? '' : `${where}: `}${failure.message}`, {
      field: failure.field,
    });
    this.failure = failure;
  }
}

/**
 * A checkpoint that cannot be trusted: `checkpoint_malformed` (not a well-formed signed checkpoint,
 * `field` names what), `checkpoint_signature` (the signature does not verify under the given key) or
 * `checkpoint_key_mismatch` (signed by, or naming, another key or node id).
 */
export class CheckpointError extends ChainError {}
