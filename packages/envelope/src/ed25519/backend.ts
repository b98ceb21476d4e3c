/**
 * An Ed25519 implementation. Both built-in backends implement strict RFC 8032 verification with the
 * cofactorless equation and give the same answer for every input; the choice is only about speed and
 * portability. Arguments are already validated (lengths, types) by the public functions.
 */
export interface Ed25519Backend {
  /** Short name, such as `node` or `noble`. */
  readonly name: string;
  /** Derives the 32-byte public key from a 32-byte secret key (seed). */
  publicKeyFromSecret(secretKey: Uint8Array): Uint8Array;
  /** Signs `message` with a 32-byte secret key and returns the 64-byte signature. */
  sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array;
  /** Verifies; returns false for any invalid signature, non-canonical encoding or off-curve point. */
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}
