import type { LifecycleState } from '@heddle/model';
import { HostServiceError } from './errors.js';
import type { HostState } from './host-state.js';
import { moveLife } from './instance-life.js';
import { isContinuous, type PlacedInstance, readStatus } from './instance-record.js';

/**
 * The opt-in controller lease of a host (docs/lifecycle.md, "At most once, with a lease"): when no controller was heard from for `leaseMs`,
 * the continuous instances controllers placed here are stopped (see {@link leaseStopInstance}). Any
 * verified request from a controller other than this node renews it. Time is an input: the lease
 * starts at `startMs` as if a controller had just been heard from.
 *
 * The lease is kept on the wall clock (the time requests carry) and, beside it, on a monotonic clock
 * (default `performance.now()`), and expires when either says so: a wall clock stepped back (a host
 * whose clock was wrong, or that NTP corrects) would otherwise stretch the lease by the step, past
 * the `lease + 30 s` of skew after which a controller replaces the instances elsewhere.
 */
export class ControllerLease {
  /** The lease period (ms). */
  readonly leaseMs: number;
  #lastHeardMs: number;
  /** When a controller was last heard from, on the monotonic clock. */
  #lastHeardMono: number;
  readonly #monotonic: () => number;

  /**
   * A lease of `leaseMs` (a positive integer of ms; `invalid_config` otherwise) starting at `startMs`
   * (wall clock), `nowMs` being the wall clock now (default `startMs`: a lease resumed from an older
   * `startMs` has that much less left on the monotonic clock too).
   */
  constructor(
    leaseMs: number,
    startMs: number,
    options: { readonly nowMs?: number; readonly monotonic?: () => number } = {},
  ) {
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) {
      throw new HostServiceError(
        'invalid_config',
        `leaseMs: expected a positive integer of ms, got ${leaseMs}`,
        {
          field: 'leaseMs',
        },
      );
    }
    this.leaseMs = leaseMs;
    this.#lastHeardMs = startMs;
    this.#monotonic = options.monotonic ?? (() => performance.now());
    this.#lastHeardMono = this.#monotonic() - Math.max(0, (options.nowMs ?? startMs) - startMs);
  }

  /** When a controller was last heard from (Unix ms). */
  get lastHeardMs(): number {
    return this.#lastHeardMs;
  }

  /**
   * A verified request from a controller renews the lease to `atMs` (wall clock: the request's issue
   * time or the arrival, whichever is earlier), `nowMs` being the wall clock now (default `atMs`); on
   * the monotonic clock it is renewed to now less `nowMs - atMs`.
   */
  heard(atMs: number, nowMs: number = atMs): void {
    if (atMs > this.#lastHeardMs) this.#lastHeardMs = atMs;
    const mono = this.#monotonic() - Math.max(0, nowMs - atMs);
    if (mono > this.#lastHeardMono) this.#lastHeardMono = mono;
  }

  /**
   * True when no controller was heard from for the lease period by `nowMs` (wall clock), or for the
   * lease period of the monotonic clock (whichever comes first).
   */
  expired(nowMs: number): boolean {
    return (
      nowMs - this.#lastHeardMs >= this.leaseMs || this.#monotonic() - this.#lastHeardMono >= this.leaseMs
    );
  }
}

/** Lifecycle states of an instance that is running or being kept running by the supervisor. */
const KEPT_RUNNING: readonly LifecycleState[] = ['running', 'unhealthy', 'restarting'];

/**
 * True when an expired lease stops `p`: a continuous (listener or interval) instance placed by a
 * controller (not by this node itself) that is meant to run, not already stopped for the lease, and
 * running or being restarted.
 */
export function leaseApplies(p: PlacedInstance, nodeId: string): boolean {
  return (
    isContinuous(p.mode) &&
    p.requester !== nodeId &&
    p.desiredRunning &&
    !p.leaseStopped &&
    KEPT_RUNNING.includes(p.life.state)
  );
}

/**
 * Stops `p` because the lease expired: through its WorkloadHost when its process runs (gated as a
 * stop under the teardown waiver, chained), then flags it `leaseStopped` (`desiredRunning` stays
 * true) and chains the lifecycle move to `stopped`, reason `lease expired`. The caller holds `p`'s
 * lock. Rejects when the stop fails (the instance is then left as it was, tried again next check).
 */
export async function leaseStopInstance(state: HostState, p: PlacedInstance, graceMs: number): Promise<void> {
  const status = await readStatus(p);
  if (status.state === 'running') await p.host.stop(p.handle, graceMs);
  p.leaseStopped = true;
  p.supervision.restartDueAtMs = undefined;
  // A crash right after must not forget why it is down (a restarted host keeps it lease-stopped).
  state.persist();
  await moveLife(state, p, 'stopped', 'lease expired', { workload: p.name, requester: p.requester });
}
