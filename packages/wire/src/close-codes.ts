/**
 * WebSocket close codes used by `@heddle/wire` (part of the protocol, docs/protocol.md section 13):
 * - `normal` 1000: the call (or session) is done;
 * - `goingAway` 1001: the server is shutting down;
 * - `policy` 1008: an unauthenticated request was answered with its one signed refusal;
 * - `tooBig` 1009: a frame exceeded the size limit;
 * - `internal` 1011: the server's handler failed;
 * - `tryAgainLater` 1013: the session cap is reached; no frame of this session was processed;
 * - `protocol` 4001: a malformed, unknown or unexpected frame (an `error` frame precedes it);
 * - `idle` 4002: no complete frame and no open call for the idle timeout;
 * - `tooManyCalls` 4003: more calls open at once than the per-session cap.
 * A peer that misses a ping is terminated without a close frame (the close code seen is 1006).
 */
export const CloseCode: {
  readonly normal: 1000;
  readonly goingAway: 1001;
  readonly policy: 1008;
  readonly tooBig: 1009;
  readonly internal: 1011;
  readonly tryAgainLater: 1013;
  readonly protocol: 4001;
  readonly idle: 4002;
  readonly tooManyCalls: 4003;
} = Object.freeze({
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
  tryAgainLater: 1013,
  protocol: 4001,
  idle: 4002,
  tooManyCalls: 4003,
} as const);

/** One of the {@link CloseCode} values. */
export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode];
