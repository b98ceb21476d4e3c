import { MAX_ENVELOPE_BYTES } from '@heddle/package';
import { MAX_MESSAGE_BYTES } from '@heddle/protocol';

/**
 * Largest JSON text frame, in UTF-8 bytes: twice {@link MAX_MESSAGE_BYTES} (the signed payload is a
 * JSON string inside the frame, and escaping at most doubles it) plus 16 KiB for the frame's own fields.
 */
export const MAX_TEXT_FRAME_BYTES: number = 2 * MAX_MESSAGE_BYTES + 16 * 1024;

/** Bytes of the header of a binary frame (see `encodeBinaryFrame`). */
export const BINARY_HEADER_BYTES = 8;

/** Largest piece the wire carries: 1 MiB (the fetching side refuses piece maps with larger pieces). */
export const MAX_WIRE_PIECE_BYTES: number = 1024 * 1024;

/**
 * Largest binary frame: the header plus the larger of a piece ({@link MAX_WIRE_PIECE_BYTES}) and an
 * envelope (`MAX_ENVELOPE_BYTES`, 1 MiB).
 */
export const MAX_BINARY_FRAME_BYTES: number =
  BINARY_HEADER_BYTES + Math.max(MAX_WIRE_PIECE_BYTES, MAX_ENVELOPE_BYTES);

/** Default cap on concurrent sessions of a server. */
export const DEFAULT_MAX_SESSIONS = 256;

/** Default cap on unauthenticated connections one remote address holds at once. */
export const DEFAULT_MAX_PEER_CONNECTIONS = 128;

/** Default cap on calls open at once in one session. */
export const DEFAULT_MAX_CALLS_PER_SESSION = 8;

/** Default time allowed from TCP accept to a completed WebSocket upgrade: 10 s. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

/** Default time a session may stay without a complete frame and without an open call: 30 s. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** Default interval between pings; a peer that has not answered the previous ping is dropped: 15 s. */
export const DEFAULT_PING_INTERVAL_MS = 15_000;

/** Default time a fetch request waits for its answer before it is retried: 15 s. */
export const DEFAULT_FETCH_TIMEOUT_MS = 15_000;

/** Default number of piece requests in flight during a fetch. */
export const DEFAULT_FETCH_WINDOW = 16;

/** Default attempts per piece (or manifest, or map) before a fetch gives up. */
export const DEFAULT_FETCH_ATTEMPTS = 3;

/** Bytes queued on a socket above which a sender waits for it to drain: 4 MiB. */
export const SEND_HIGH_WATER_BYTES: number = 4 * 1024 * 1024;

/** Default call timeout of a client: 60 s. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
