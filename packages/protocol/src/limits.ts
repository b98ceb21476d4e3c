/**
 * Protocol constants of the signed control messages. They are part of the protocol (docs/protocol.md),
 * not tunables: every host and controller must agree on them.
 */

/** The version every request and response carries. */
export const CTL_VERSION = 1;

/** Largest payload (UTF-8 bytes of the signed JSON text) of a request or a response: 256 KiB. */
export const MAX_MESSAGE_BYTES: number = 256 * 1024;

/** Deepest nesting of arrays and objects in a payload (the payload object itself is depth 1). */
export const MAX_PAYLOAD_DEPTH = 32;

/** Longest allowed request lifetime, `expires_at_ms - issued_at_ms`: 300 s. */
export const MAX_LIFETIME_MS = 300_000;

/** Largest tolerated clock difference between controller and host: 30 s. */
export const MAX_CLOCK_SKEW_MS = 30_000;

/** Lifetime `createRequest` gives a request when none is asked for: 290 s (the original's). */
export const DEFAULT_REQUEST_TTL_MS = 290_000;

/** Longest `reason` of a refusal in bytes of UTF-8; `signResponse` truncates longer ones. */
export const MAX_REASON_LENGTH = 4096;

/** Longest method, requester, target or nonce string (bytes of UTF-8) a payload may carry before its format is checked. */
export const MAX_TOKEN_LENGTH = 128;

/** Nonce: 16 random bytes as 32 lower-case hex characters. */
export const NONCE_HEX_LENGTH = 32;

/** Nonce memory of a `NonceGuard` when no capacity is given. */
export const DEFAULT_NONCE_CAPACITY = 65_536;
