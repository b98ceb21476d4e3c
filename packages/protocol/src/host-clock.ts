// The host's clock as a controller can read it (docs/protocol.md 6 and 14.1): `advertisement.clock_ms`
// of a describe answer, and the `[host_clock_ms=<ms>]` suffix a reference host puts at the end of the
// reason of a time-window refusal (checks 6a and 6b). Both are signed by the host and bound to the
// request's nonce, so they are readings made after the request was sent and before its answer came
// back: a controller that knows when it sent and when it received has the host's offset to within half
// the round trip (see {@link clockOffset}).

/** The tag a reference host appends to the reason of an `expired` refusal of check 6a or 6b. */
export const HOST_CLOCK_TAG = 'host_clock_ms';

const SUFFIX_RE = /\[host_clock_ms=(\d{1,16})\]$/;

/** The suffix that names the host's clock `nowMs` at the end of a refusal reason: `[host_clock_ms=<ms>]`. */
export function hostClockSuffix(nowMs: number): string {
  return `[${HOST_CLOCK_TAG}=${Math.max(0, Math.trunc(nowMs))}]`;
}

/**
 * The host's clock named at the end of a refusal `reason` (`[host_clock_ms=<ms>]`, a non-negative safe
 * integer), or null when the reason does not end with one (an older host, another refusal).
 */
export function hostClockFromReason(reason: string): number | null {
  const m = SUFFIX_RE.exec(reason);
  if (m === null) return null;
  const v = Number(m[1]);
  return Number.isSafeInteger(v) ? v : null;
}

/** A host's clock offset, measured from one signed round trip. */
export interface ClockOffset {
  /** The host's clock minus this clock (ms): positive when the host is ahead. */
  readonly offset_ms: number;
  /** How far the true offset can be from {@link offset_ms} (ms): half the round trip. */
  readonly error_ms: number;
}

/**
 * The offset of a host's clock from ours, from a reading `hostMs` it signed while answering a request we
 * sent at `sentMs` and whose answer we received at `receivedMs` (both on our clock): the reading was
 * made between the two, so the host's clock minus the midpoint is the offset to within half the round
 * trip (the error bound). Undefined when the times are not ordered.
 */
export function clockOffset(hostMs: number, sentMs: number, receivedMs: number): ClockOffset | undefined {
  if (!(receivedMs >= sentMs) || !Number.isFinite(hostMs)) return undefined;
  const mid = (sentMs + receivedMs) / 2;
  return { offset_ms: Math.round(hostMs - mid), error_ms: Math.ceil((receivedMs - sentMs) / 2) };
}
