import type { InstanceStatus } from '@heddle/runtime';
import { messageOf } from './errors.js';
import type { HostState } from './host-state.js';
import { moveLife } from './instance-life.js';
import { isContinuous, type PlacedInstance, readStatus } from './instance-record.js';
import { type ControllerLease, leaseApplies, leaseStopInstance } from './lease.js';
import { type ReadinessProbe, readinessProbeFor } from './readiness.js';
import { restartDelayMs, type SupervisorPolicy } from './supervisor-policy.js';

/** What the supervisor did, for the daemon's log (everything here is also chained). */
export interface SupervisorEvent {
  /**
   * `unhealthy` (a health check failed), `restart_scheduled` (a restart waits out its backoff),
   * `restarted`, `restart_failed` (the start of a restart was refused or failed), `failed` (the
   * restart budget is spent: it is not restarted again), `finished` (a `once` run ended),
   * `lease_stopped` (stopped because no controller was heard from for the lease period).
   */
  readonly type:
    | 'unhealthy'
    | 'restart_scheduled'
    | 'restarted'
    | 'restart_failed'
    | 'failed'
    | 'finished'
    | 'lease_stopped';
  readonly instanceId: string;
  readonly reason: string;
  /** Supervisor restarts of the instance in the current budget window. */
  readonly restarts: number;
  /** The wait before the restart (`restart_scheduled`). */
  readonly delayMs?: number;
}

/** What a {@link Supervisor} is built with. */
export interface SupervisorInit {
  readonly state: HostState;
  readonly policy: SupervisorPolicy;
  /** Readiness of listeners: a probe, `false` for none, undefined for the built-in TCP probe. */
  readonly readiness?: ReadinessProbe | false;
  /** The controller lease, when the host has one. */
  readonly lease?: ControllerLease;
  readonly onEvent?: (e: SupervisorEvent) => void;
  readonly onError?: (err: unknown) => void;
}

const describeExit = (s: InstanceStatus): string => {
  if (s.state === 'unknown') return `status unknown${s.detail === undefined ? '' : `: ${s.detail}`}`;
  if (s.state === 'failed') return `run failed${s.detail === undefined ? '' : `: ${s.detail}`}`;
  if (s.lastSignal !== undefined && s.lastSignal !== null) return `process ended by ${s.lastSignal}`;
  return `process exited (exit code ${s.lastExitCode ?? 'unknown'})`;
};

/**
 * A host's supervisor (docs/host.md "Supervision and the controller lease"). Every
 * `intervalMs` (sooner when a restart falls due) it checks each instance under its lock, so that it
 * never interleaves with a request on it:
 *
 * - when the lease expired, continuous instances controllers placed are stopped ({@link leaseStopInstance});
 * - a `once` instance whose run ended is `finished` (never restarted);
 * - a listener or interval instance meant to run (`desiredRunning`, not lease-stopped) whose adapter
 *   says `exited`, `failed` or `unknown` (or, for a listener, fails its readiness probe
 *   `readinessMisses` times in a row once `readinessGraceMs` passed since its start) becomes
 *   `unhealthy`, then `restarting` for a backoff with jitter, then is started again through its
 *   WorkloadHost (gated and chained) and is `running`; once `maxRestarts` restarts were made in the
 *   rolling window it is `failed` (reason `restart budget spent`) and left alone until a start.
 *
 * Every lifecycle move is chained (`workload.lifecycle`). The timer never throws: failures go to
 * `onError`.
 */
export class Supervisor {
  readonly #state: HostState;
  readonly #policy: SupervisorPolicy;
  readonly #readiness: ReadinessProbe | false | undefined;
  readonly #lease: ControllerLease | undefined;
  readonly #onEvent: (e: SupervisorEvent) => void;
  readonly #onError: (err: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #started = false;
  #stopped = false;

  constructor(init: SupervisorInit) {
    this.#state = init.state;
    this.#policy = init.policy;
    this.#readiness = init.readiness;
    this.#lease = init.lease;
    this.#onEvent = init.onEvent ?? (() => {});
    this.#onError = init.onError ?? (() => {});
  }

  /** The policy in force. */
  get policy(): SupervisorPolicy {
    return this.#policy;
  }

  /** Starts the checks (the timer does not keep the process alive). A no-op once started or stopped. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#schedule(this.#policy.intervalMs);
  }

  /** Stops the checks and waits for the one in progress, if any. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One pass over every instance (the timer's work; never rejects). */
  async tick(): Promise<void> {
    try {
      // The lease is judged when each instance's lock is held: a controller heard from while this
      // pass waited for a busy lock (an operator verb) renews it in time.
      const leaseExpired = (): boolean => this.#lease?.expired(this.#state.now()) ?? false;
      await Promise.all(
        [...this.#state.instances.values()].map((p) =>
          this.#state.locks
            .run(p.instanceId, () => this.#check(p, leaseExpired()))
            .catch((err: unknown) => this.#report(err)),
        ),
      );
    } catch (err) {
      this.#report(err);
    }
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.tick().finally(() => {
        this.#running = undefined;
        this.#schedule(this.#nextDelay());
      });
    }, ms);
    this.#timer.unref();
  }

  /** The interval, or less when a restart falls due sooner (at least 5 ms). */
  #nextDelay(): number {
    let next = this.#policy.intervalMs;
    const now = this.#state.now();
    for (const p of this.#state.instances.values()) {
      const due = p.supervision.restartDueAtMs;
      if (due !== undefined) next = Math.min(next, Math.max(5, due - now));
    }
    return next;
  }

  #report(err: unknown): void {
    try {
      this.#onError(err);
    } catch {
      // Nothing left to tell.
    }
  }

  #event(p: PlacedInstance, type: SupervisorEvent['type'], reason: string, delayMs?: number): void {
    try {
      this.#onEvent({
        type,
        instanceId: p.instanceId,
        reason,
        restarts: p.supervision.restartsAtMs.length,
        ...(delayMs === undefined ? {} : { delayMs }),
      });
    } catch (err) {
      this.#report(err);
    }
  }

  async #check(p: PlacedInstance, leaseExpired: boolean): Promise<void> {
    const state = this.#state;
    if (this.#stopped || state.instances.get(p.instanceId) !== p) return;
    const now = state.now();
    const window = p.supervision.restartsAtMs;
    // cast: window.length > 0, so window[0] exists.
    while (window.length > 0 && (window[0] as number) <= now - this.#policy.windowMs) window.shift();
    if (leaseExpired && leaseApplies(p, state.nodeId)) {
      try {
        await leaseStopInstance(state, p, this.#policy.stopGraceMs);
        this.#event(p, 'lease_stopped', 'lease expired');
      } catch (err) {
        this.#report(err);
      }
      return;
    }
    const status = await readStatus(p);
    if (!isContinuous(p.mode)) return this.#checkOnce(p, status);
    if (!p.desiredRunning || p.leaseStopped) return;
    switch (p.life.state) {
      case 'restarting':
        if ((p.supervision.restartDueAtMs ?? 0) <= now) await this.#restart(p, status);
        return;
      case 'running':
        if (status.state === 'exited' || status.state === 'failed' || status.state === 'unknown') {
          return this.#unhealthy(p, describeExit(status));
        }
        if (status.state === 'running') return this.#checkReady(p, status, now);
        return;
      default:
        // loaded, stopped, finished: not running on purpose; failed: the budget is spent.
        return;
    }
  }

  async #checkOnce(p: PlacedInstance, status: InstanceStatus): Promise<void> {
    if (p.life.state !== 'running') return;
    if (status.state === 'exited') {
      const reason = `run ended (${describeExit(status).replace(/^process /, '')})`;
      await moveLife(this.#state, p, 'finished', reason, {
        workload: p.name,
        exit_code: status.lastExitCode ?? null,
        signal: status.lastSignal ?? null,
      });
      this.#event(p, 'finished', reason);
    } else if (status.state === 'failed') {
      const reason = describeExit(status);
      await moveLife(this.#state, p, 'failed', reason, { workload: p.name });
      this.#event(p, 'failed', reason);
    }
  }

  async #checkReady(p: PlacedInstance, status: InstanceStatus, now: number): Promise<void> {
    const probe = readinessProbeFor(p, this.#readiness);
    if (probe === undefined) return;
    if (now - (status.startedAtMs ?? now) < this.#policy.readinessGraceMs) return;
    const ready = await probe(p).catch(() => false);
    if (ready) {
      p.supervision.readinessMisses = 0;
      return;
    }
    p.supervision.readinessMisses += 1;
    if (p.supervision.readinessMisses >= this.#policy.readinessMisses) {
      await this.#unhealthy(
        p,
        `not ready: ${p.supervision.readinessMisses} readiness probes failed in a row`,
      );
    }
  }

  /** `running` -> `unhealthy`, then a restart is scheduled or, with the budget spent, `failed`. */
  async #unhealthy(p: PlacedInstance, reason: string): Promise<void> {
    p.supervision.readinessMisses = 0;
    await moveLife(this.#state, p, 'unhealthy', reason, { workload: p.name });
    this.#event(p, 'unhealthy', reason);
    await this.#afterFailure(p);
  }

  async #afterFailure(p: PlacedInstance): Promise<void> {
    const policy = this.#policy;
    const restarts = p.supervision.restartsAtMs.length;
    if (restarts >= policy.maxRestarts) {
      p.supervision.restartDueAtMs = undefined;
      // A process still running (a listener that is not ready) is stopped: `failed` does not run.
      const status = await readStatus(p);
      if (status.state === 'running') {
        await p.host.stop(p.handle, policy.stopGraceMs).catch((err: unknown) => this.#report(err));
      }
      const reason = 'restart budget spent';
      await moveLife(this.#state, p, 'failed', reason, {
        workload: p.name,
        restarts,
        window_ms: policy.windowMs,
      });
      // Kept through a crash of the host: a restarted host must not restart it with a fresh budget.
      this.#state.persist();
      this.#event(p, 'failed', reason);
      return;
    }
    const delayMs = restartDelayMs(restarts, policy);
    p.supervision.restartDueAtMs = this.#state.now() + delayMs;
    const reason = `restart ${restarts + 1} of ${policy.maxRestarts} in ${delayMs} ms`;
    await moveLife(this.#state, p, 'restarting', reason, { workload: p.name, delay_ms: delayMs });
    this.#event(p, 'restart_scheduled', reason, delayMs);
  }

  /** The restart itself: a still-running process is stopped first; then started through its WorkloadHost. */
  async #restart(p: PlacedInstance, status: InstanceStatus): Promise<void> {
    const policy = this.#policy;
    p.supervision.restartDueAtMs = undefined;
    p.supervision.restartsAtMs.push(this.#state.now());
    const n = p.supervision.restartsAtMs.length;
    try {
      if (status.state === 'running') await p.host.stop(p.handle, policy.stopGraceMs);
      await p.host.start(p.handle);
    } catch (err) {
      this.#event(p, 'restart_failed', `restart ${n} failed: ${messageOf(err)}`);
      await this.#afterFailure(p);
      return;
    }
    const reason = `restarted by the supervisor (${n} of ${policy.maxRestarts} in the window)`;
    await moveLife(this.#state, p, 'running', reason, { workload: p.name, restarts: n });
    this.#event(p, 'restarted', reason);
  }
}
