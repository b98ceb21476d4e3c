/** Tunables of a control plane (docs/operator-guide.md). */
export interface PlaneConfig {
  /** Timeout of read-only and instance calls (default 20 s). */
  readonly callTimeoutMs: number;
  /**
   * Bound of one node's health check (the describe of a refresh, the status listing of a tick),
   * connection included (default 5 s): a node that accepts connections and never answers costs its
   * own check this long and nothing else.
   */
  readonly healthTimeoutMs: number;
  /** Most health checks in flight at once (default 16). */
  readonly healthConcurrency: number;
  /** Timeout of a `place` (the package transfer included; default 280 s). */
  readonly placeTimeoutMs: number;
  /** Lifetime of each signed request (default 290 s; at most 300 s). */
  readonly requestTtlMs: number;
  /**
   * Kept for compatibility and checked (at most `deadAfterMs`), but no longer used: liveness follows
   * the controller's own checks (a node is suspect from its first failed check, dead once its checks
   * have failed for `deadAfterMs`); silence the controller did not ask about does not count.
   */
  readonly suspectAfterMs: number;
  /** A node unreachable or silent for this long is dead (default 30 s). */
  readonly deadAfterMs: number;
  /** How long an indeterminate place is reconciled (polled with `status`) before it is kept unsettled (default 30 s). */
  readonly reconcileTimeoutMs: number;
  /** Most candidates a place is dispatched to, winner included (default 8). */
  readonly maxAttempts: number;
  /**
   * How far a host's clock may lag the controller's (default 30 s, the protocol's skew): a lost place
   * is judged "never acted on" only once its request expired by this margin, since until then the
   * original request could still arrive and be executed.
   */
  readonly clockSkewMs: number;
  /**
   * A host whose measured clock offset exceeds this either way (error bound taken off) raises a
   * `clock_skew` alert, before the protocol's 30 s window is reached (default 10 s); it closes once the
   * offset is back under half of it (docs/operator-guide.md, "Clock skew").
   */
  readonly clockSkewWarnMs: number;
  /** Timeout of the `place` of a reschedule (default 60 s: a replacement that cannot be fetched in time is retried later). */
  readonly rescheduleTimeoutMs: number;
  /** First wait before retrying a reschedule that found no node, or an orphan unload that failed (default 10 s, doubling). */
  readonly rescheduleBackoffMs: number;
  /** Longest wait between two such retries (default 5 min). */
  readonly rescheduleBackoffMaxMs: number;
  /** Most reschedules of one original instance (its lineage); then an alert (default 5). */
  readonly maxReschedules: number;
  /**
   * Most host sessions kept open at once (default 4,096): one per node URL, reused by every call to
   * it; one more closes the least recently used idle one (docs/protocol.md 13.1).
   */
  readonly maxHostSessions: number;
  /** A kept host session unused for this long is closed (default 10 s; a host closes idle ones after 30 s). */
  readonly hostSessionIdleMs: number;
}

/** The default {@link PlaneConfig}. */
export const DEFAULT_PLANE_CONFIG: PlaneConfig = Object.freeze({
  callTimeoutMs: 20_000,
  healthTimeoutMs: 5_000,
  healthConcurrency: 16,
  placeTimeoutMs: 280_000,
  requestTtlMs: 290_000,
  suspectAfterMs: 15_000,
  deadAfterMs: 30_000,
  reconcileTimeoutMs: 30_000,
  maxAttempts: 8,
  clockSkewMs: 30_000,
  clockSkewWarnMs: 10_000,
  rescheduleTimeoutMs: 60_000,
  rescheduleBackoffMs: 10_000,
  rescheduleBackoffMaxMs: 300_000,
  maxReschedules: 5,
  maxHostSessions: 4096,
  hostSessionIdleMs: 10_000,
});

/** `DEFAULT_PLANE_CONFIG` with `overrides` applied; throws a RangeError for values out of range. */
export function planeConfig(overrides: Partial<PlaneConfig> = {}): PlaneConfig {
  const c = { ...DEFAULT_PLANE_CONFIG, ...overrides };
  for (const [k, v] of Object.entries(c)) {
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer`);
  }
  if (c.requestTtlMs > 300_000) throw new RangeError('requestTtlMs must be at most 300000');
  if (c.rescheduleBackoffMs > c.rescheduleBackoffMaxMs)
    throw new RangeError('rescheduleBackoffMs must not exceed rescheduleBackoffMaxMs');
  if (c.suspectAfterMs > c.deadAfterMs) throw new RangeError('suspectAfterMs must not exceed deadAfterMs');
  return Object.freeze(c);
}
