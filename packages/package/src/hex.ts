// Hex field schemas shared by this package's files (internal: not exported from the package).
import { HEX64_RE, HEX128_RE } from '@heddle/envelope';
import { z } from 'zod';

const message = (n: number, what?: string): string =>
  what === undefined
    ? `expected ${n} lower-case hex characters`
    : `expected ${what}: ${n} lower-case hex characters`;

/** 64 lower-case hex characters (a public key, a BLAKE3-256 digest), `what` naming it in the message. */
export function hex64(what?: string): z.ZodString {
  return z.string().regex(HEX64_RE, message(64, what));
}

/** 128 lower-case hex characters (an Ed25519 signature), `what` naming it in the message. */
export function hex128(what?: string): z.ZodString {
  return z.string().regex(HEX128_RE, message(128, what));
}
