import { type DomainTagValue, domainMessage } from './domain-tag.js';
import { sign, verify } from './ed25519/sign.js';

// The tags themselves live in a module of their own (no signing backend), for the portable entry.
export { DomainTag, type DomainTagValue, domainMessage } from './domain-tag.js';

/** Signs `tag || message` with a 32-byte secret key. */
export function signWithDomain(tag: DomainTagValue, secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return sign(secretKey, domainMessage(tag, message));
}

/** Verifies a signature over `tag || message`; false when invalid, TypeError for malformed arguments. */
export function verifyWithDomain(
  tag: DomainTagValue,
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  return verify(publicKey, domainMessage(tag, message), signature);
}
