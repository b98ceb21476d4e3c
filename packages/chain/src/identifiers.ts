import { ChainError } from './errors.js';

/** Longest accepted source or kind, in characters. */
export const MAX_IDENTIFIER_LENGTH = 128;

/**
 * A dotted lower-case identifier: segments of `[a-z][a-z0-9_]*` joined by single dots, 1 to
 * {@link MAX_IDENTIFIER_LENGTH} characters. Such a string never needs escaping in JSON.
 */
export const IDENTIFIER_PATTERN: RegExp = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;

/** True when `value` is a valid source or kind (see {@link IDENTIFIER_PATTERN}). */
export function isIdentifier(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_IDENTIFIER_LENGTH && IDENTIFIER_PATTERN.test(value);
}

/**
 * Throws `ChainError` with code `invalid_source` or `invalid_kind` (field `source` / `kind`) unless
 * `value` is a valid identifier.
 */
export function assertIdentifier(field: 'source' | 'kind', value: unknown): asserts value is string {
  if (isIdentifier(value)) return;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
  throw new ChainError(
    field === 'source' ? 'invalid_source' : 'invalid_kind',
    `${field} must be a dotted lower-case identifier such as "workload.start" (at most ${MAX_IDENTIFIER_LENGTH} characters), got ${shown}`,
    { field },
  );
}
