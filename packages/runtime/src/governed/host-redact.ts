import type { JsonValue } from '@heddle/envelope';

/** What a secret is replaced with in anything the host chains or returns. */
export const REDACTED = '[redacted]';

/** The shortest piece of a secret, cut at the edge of a bounded string, that is still redacted. */
const MIN_FRAGMENT = 8;

/**
 * Removes every occurrence of each secret (an instance's ingest token) from `text`, and a piece of one
 * cut at either edge of it (an output tail that starts inside the token, an argument bounded inside
 * it) when that piece is at least 8 characters long. Empty secrets are ignored.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    out = redactEdges(out, secret);
  }
  return out;
}

function redactEdges(text: string, secret: string): string {
  let out = text;
  for (let k = Math.min(secret.length - 1, out.length); k >= MIN_FRAGMENT; k--) {
    if (out.startsWith(secret.slice(-k))) {
      out = REDACTED + out.slice(k);
      break;
    }
  }
  for (let k = Math.min(secret.length - 1, out.length); k >= MIN_FRAGMENT; k--) {
    if (out.endsWith(secret.slice(0, k))) {
      out = out.slice(0, out.length - k) + REDACTED;
      break;
    }
  }
  return out;
}

/** {@link redactSecrets} applied to every string (not keys) of a JSON value. */
export function redactJson(value: JsonValue, secrets: readonly string[]): JsonValue {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return redactSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, secrets));
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactJson(v, secrets);
    return out;
  }
  return value;
}
