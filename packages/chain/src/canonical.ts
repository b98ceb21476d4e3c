import { canonicalJson, DEFAULT_JSON_LIMITS, HeddleError, type JsonLimits } from '@heddle/envelope';
import { ChainError } from './errors.js';

/**
 * RFC 8785 canonical JSON of an event payload (envelope's `canonicalJson`: integers only, bounded
 * depth and size). Throws `ChainError` with code `invalid_payload` (field `payload` plus the JSON
 * path) when the value cannot be encoded.
 */
export function canonicalPayload(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): string {
  try {
    return canonicalJson(value, limits);
  } catch (err) {
    if (err instanceof HeddleError) {
      throw new ChainError('invalid_payload', `payload: ${err.message}`, {
        field: err.field === undefined ? 'payload' : `payload${err.field.slice(1)}`,
        cause: err,
      });
    }
    throw err;
  }
}
