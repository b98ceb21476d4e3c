import { performance } from 'node:perf_hooks';
import type { AcquireResult, LeaseRow } from './pg-leader-lease.js';

/** The lease operations a {@link LeaderElector} needs (`PgLeaderLease` provides them). */
export interface LeaderLeaseBackend {
  acquire(holder: string, ttlMs: number): Promise<AcquireResult>;
  setTermEvent(holder: string, epoch: number, hash: string): Promise<boolean>;
  release(holder: string, epoch: number): Promise<void>;
}

/** A term that just began: who led before (null for the first term ever, or after a clean release). */
export interface NewTerm {
  readonly epoch: number;
  /** The previous holder, its epoch and its term's chained event, when there was one. */
  readonly previous: {
    readonly holder: string;
    readonly epoch: number;
    readonly event: string | null;
  } | null;
}

/** Who leads, as this controller last learned it. */
export interface LeaderStatus {
  /** This controller's node id. */
  readonly self: string;
  /** True while this controller may act as leader (see {@link LeaderElector.isLeader}). */
  readonly leading: boolean;
  /** The holder the database last named (empty before anyone held it), and its term. */
  readonly leader: string;
  readonly epoch: number;
  /** When that lease ends on the database's clock (Unix ms), 0 before anyone held it. */
  readonly expiresAtMs: number;
  /** Why the last refresh failed, or null. */
  readonly lastError: string | null;
  /**
   * Until when this controller may act (or might have acted) as leader on its own count, as a Unix
   * time in ms on its own clock (0 before it ever held the lease): a loss noticed late (the process
   * was busy, a synchronous call blocked it) still says when its leadership really ended.
   */
  readonly actsUntilMs: number;
}

/** Options of a {@link LeaderElector}. */
export interface LeaderElectorOptions {
  readonly lease: LeaderLeaseBackend;
  /** This controller's node id (the holder it writes). */
  readonly self: string;
  /**
   * The refresh period R (ms, at least 30): the lease is granted for R and refreshed every R/3 by the
   * holder (the others try as often); the holder acts as leader only until R - R/6 after the start of
   * its last successful refresh.
   */
  readonly refreshMs: number;
  /**
   * Called once per term this controller wins, before it is reported as leading: chains the takeover
   * and answers the event's hash (written to the lease row for the next leader to cross-reference).
   * A rejection gives the term up at once.
   */
  readonly onElected?: ((term: NewTerm) => Promise<string>) | undefined;
  /** Called each time `leading` changes (after `onElected` for a gain). */
  readonly onChange?: ((status: LeaderStatus) => void) | undefined;
  /** Monotonic clock in ms (default `performance.now`). */
  readonly monotonicMs?: (() => number) | undefined;
}

/**
 * Holds or waits for the controllers' leadership lease (docs/operator-guide.md, "Running several
 * controllers"). Only the holder runs the lifecycle tick. Fencing is local and needs no clock
 * agreement: a holder counts its lease from when it *sent* its last successful refresh (the database
 * granted it from later), and stops acting as leader R/6 before that count runs out, so it has
 * stopped before any other controller can be granted the lease.
 */
export class LeaderElector {
  readonly #o: LeaderElectorOptions;
  readonly #mono: () => number;
  #validUntil = 0;
  #epoch = 0;
  #row: LeaseRow | undefined;
  #lastError: string | null = null;
  #leading = false;
  #timer: NodeJS.Timeout | undefined;
  #lapse: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: LeaderElectorOptions) {
    if (!(Number.isInteger(options.refreshMs) && options.refreshMs >= 30)) {
      throw new RangeError(`refreshMs: expected a whole number of ms >= 30, got ${options.refreshMs}`);
    }
    this.#o = options;
    this.#mono = options.monotonicMs ?? (() => performance.now());
  }

  /** The lease length granted by the database (R). */
  get ttlMs(): number {
    return this.#o.refreshMs;
  }

  /** Time between two refreshes (R/3). */
  get intervalMs(): number {
    return Math.max(10, Math.floor(this.#o.refreshMs / 3));
  }

  /** True while this controller holds the lease with more than the margin (R/6) left on its own count. */
  isLeader(): boolean {
    return this.#leading && this.#mono() < this.#validUntil;
  }

  /** The term this controller leads in (0 when it does not lead). */
  get epoch(): number {
    return this.isLeader() ? this.#epoch : 0;
  }

  /** Who leads, as last learned. */
  status(): LeaderStatus {
    return {
      self: this.#o.self,
      leading: this.isLeader(),
      leader: this.#row?.holder ?? '',
      epoch: this.#row?.epoch ?? 0,
      expiresAtMs: this.#row?.expiresAtMs ?? 0,
      lastError: this.#lastError,
      actsUntilMs: this.#validUntil === 0 ? 0 : Math.round(Date.now() - this.#mono() + this.#validUntil),
    };
  }

  /** Refreshes now, then every {@link intervalMs} until {@link stop}. */
  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    void this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.intervalMs);
    // A held lease also lapses on time between refreshes (a hung database call).
    this.#timer.unref?.();
  }

  /** One refresh (single flight); never rejects. */
  refresh(): Promise<void> {
    this.#running ??= this.#refreshOnce().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops refreshing; gives the lease up when held (so another takes over at once). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#lapse);
    await this.#running?.catch(() => undefined);
    const epoch = this.#epoch;
    const was = this.isLeader();
    this.#setLeading(false);
    if (was) await this.#o.lease.release(this.#o.self, epoch).catch(() => undefined);
  }

  async #refreshOnce(): Promise<void> {
    if (this.#stopped) return;
    const sentAt = this.#mono();
    let r: AcquireResult;
    try {
      r = await this.#o.lease.acquire(this.#o.self, this.ttlMs);
    } catch (err) {
      this.#lastError = err instanceof Error ? err.message : String(err);
      this.#checkLapsed();
      return;
    }
    this.#lastError = null;
    this.#row = r.row;
    if (!r.held) {
      this.#setLeading(false);
      return;
    }
    const until = sentAt + this.ttlMs - Math.ceil(this.ttlMs / 6);
    if (r.newTerm || r.row.epoch !== this.#epoch) {
      this.#setLeading(false);
      this.#epoch = r.row.epoch;
      this.#validUntil = until;
      const prev = r.previous;
      const term: NewTerm = {
        epoch: r.row.epoch,
        previous:
          prev === null || prev.holder === '' || prev.epoch === 0
            ? null
            : { holder: prev.holder, epoch: prev.epoch, event: prev.termEvent },
      };
      try {
        const hash = await this.#o.onElected?.(term);
        if (hash !== undefined) await this.#o.lease.setTermEvent(this.#o.self, term.epoch, hash);
      } catch (err) {
        this.#lastError = `taking over: ${err instanceof Error ? err.message : String(err)}`;
        await this.#o.lease.release(this.#o.self, term.epoch).catch(() => undefined);
        this.#validUntil = 0;
        return;
      }
      if (this.#stopped) return;
      this.#setLeading(this.#mono() < until);
      return;
    }
    this.#validUntil = until;
    this.#setLeading(this.#mono() < until);
  }

  /**
   * Checks for the lapse when the count runs out; armed again when the timer fired early (the event
   * loop's clock lags real time after a long turn under load).
   */
  #armLapse(): void {
    this.#lapse = setTimeout(
      () => {
        if (this.#leading && this.#mono() < this.#validUntil) this.#armLapse();
        else this.#checkLapsed();
      },
      Math.max(0, this.#validUntil - this.#mono()) + 1,
    );
    this.#lapse.unref?.();
  }

  #checkLapsed(): void {
    if (this.#leading && this.#mono() >= this.#validUntil) this.#setLeading(false);
  }

  #setLeading(v: boolean): void {
    // While leading, the lease's end on this controller's own count is watched, so that a refresh that
    // hangs past it is reported (onChange) when it lapses, not when the call finally fails.
    clearTimeout(this.#lapse);
    if (v && !this.#stopped) this.#armLapse();
    if (this.#leading === v) return;
    this.#leading = v;
    this.#o.onChange?.(this.status());
  }
}
