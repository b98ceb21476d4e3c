import { HeddleError } from '@heddle/envelope';
import type { RevocationList } from '@heddle/package';
import type { ControlPlane } from './control-plane.js';
import type { TickReport } from './lifecycle-tick.js';

/** Where the daemon loop writes what its ticks did (a `Logger` of `@heddle/cli-kit` fits). */
export interface TickLog {
  /** When given, each tick of a leader is logged at its start and end (`tick started`, `tick finished`). */
  debug?(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}

/**
 * The controller's own revocation list, reloaded from its file on every tick: `reload` answers true
 * when the list in force changed (`@heddle/package`'s `RevocationHolder` fits).
 */
export interface ReloadableRevocations {
  /** The list in force (its `failure` set when it failed closed). */
  readonly list: RevocationList;
  /** Loads the list again; true when its generation or failure changed. */
  reload(): boolean;
}

/** Options of a {@link DaemonLoop}. */
export interface DaemonLoopOptions {
  /** The plane whose periodic work the loop drives. */
  readonly plane: ControlPlane;
  readonly log: TickLog;
  /** Time between two ticks, in ms (at least 1). */
  readonly intervalMs: number;
  /** The controller's own list: reloaded each tick, and pushed when newer than the plane's. */
  readonly revocations?: ReloadableRevocations | undefined;
  /**
   * With several controllers: ticks run only while this answers true (a `LeaderElector` of the
   * `./leader` entry fits), and each tick is fenced by it (it stops at its next write once false).
   * Absent: a lone controller, which always ticks.
   */
  readonly leadership?: { isLeader(): boolean } | undefined;
  /** Called when a leader's tick starts (with its reason): what the failover benchmark times. */
  readonly onTick?: ((reason: string) => void) | undefined;
}

function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof HeddleError) return { error_code: err.code, error_field: err.field, error: err.message };
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}

/**
 * The controller daemon's periodic work: every `intervalMs` (and at {@link DaemonLoop.start}) one
 * tick reloads the revocation list (and distributes it when it grew), then runs the plane's lifecycle
 * tick (refresh, reconcile, node death, reschedules, orphans, revocation push, settle), and logs what
 * happened and each node whose liveness changed. Ticks never overlap; a tick that fails is logged and
 * the loop keeps running. With a `leadership`, a controller that does not lead ticks nothing and only
 * refreshes its nodes (`ControlPlane.refreshNodes`): the places it serves are decided on that view.
 */
export class DaemonLoop {
  readonly #o: DaemonLoopOptions;
  readonly #liveness = new Map<string, string>();
  #ticking: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: DaemonLoopOptions) {
    if (!(Number.isInteger(options.intervalMs) && options.intervalMs >= 1)) {
      throw new RangeError(`intervalMs: expected a whole number of ms >= 1, got ${options.intervalMs}`);
    }
    this.#o = options;
  }

  /** Ticks once now, then every `intervalMs` until {@link DaemonLoop.stop}. */
  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    void this.tick('start');
    this.#timer = setInterval(() => void this.tick('interval'), this.#o.intervalMs);
  }

  /** One tick now (a call while one runs gets that one); never rejects. */
  tick(reason: string): Promise<void> {
    // A follower ticks nothing, but it serves places, decided on its own view of the nodes' liveness
    // (which follows its own calls): it refreshes that view. Not in the tick's single flight, so that
    // a term won meanwhile starts its tick at once.
    const leadership = this.#o.leadership;
    if (leadership !== undefined && !leadership.isLeader()) return this.#followerRefresh();
    this.#ticking ??= this.#tickOnce(reason).finally(() => {
      this.#ticking = undefined;
    });
    return this.#ticking;
  }

  /** Stops the timer and waits for the tick (or a follower's refresh) in progress (idempotent). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#ticking?.catch(() => {});
    await this.#refreshing;
  }

  async #tickOnce(reason: string): Promise<void> {
    const { plane, log, revocations, leadership } = this.#o;
    if (leadership !== undefined && !leadership.isLeader()) return;
    const fence = leadership === undefined ? undefined : () => leadership.isLeader();
    this.#o.onTick?.(reason);
    log.debug?.('tick started', { reason });
    try {
      if (revocations?.reload() === true) {
        const failure = revocations.list.failure;
        const fields = { generation: revocations.list.generation, failure };
        if (failure === undefined) log.info('revocation list changed', fields);
        else
          log.warn(
            'revocation list changed: it failed closed, every package is refused until it is fixed',
            fields,
          );
      }
      // A list that cannot be pushed now must not cost the tick its refresh, death detection and settling.
      if (fence === undefined || fence())
        await this.#pushOwnList().catch((err: unknown) =>
          log.error('revocation push failed (tried again next tick)', { reason, ...errorFields(err) }),
        );
      logTick(log, reason, await plane.tick(fence));
      this.#logLiveness();
    } catch (err) {
      log.error('tick failed (the daemon keeps running)', { reason, ...errorFields(err) });
    }
    log.debug?.('tick finished', { reason });
  }

  /** Logs each node whose liveness changed since the last look. */
  #logLiveness(): void {
    for (const n of this.#o.plane.nodes()) {
      if (this.#liveness.get(n.node_id) !== n.liveness) {
        this.#o.log.info('node liveness', {
          node_id: n.node_id,
          liveness: n.liveness,
          last_error: n.last_error,
        });
        this.#liveness.set(n.node_id, n.liveness);
      }
    }
  }

  /** A follower's refresh of every node (single flight of its own); never rejects. */
  #followerRefresh(): Promise<void> {
    this.#refreshing ??= this.#o.plane
      .refreshNodes()
      .then(() => this.#logLiveness())
      .catch((err: unknown) => this.#o.log.warn('node refresh failed', errorFields(err)))
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }

  /** Distributes the controller's own list when it is newer than the one the plane holds. */
  async #pushOwnList(): Promise<void> {
    const { plane, log, revocations } = this.#o;
    const list = revocations?.list;
    if (list === undefined || list.failure !== undefined) return;
    if (list.generation <= plane.revocationStatus().generation) return;
    const r = await plane.pushRevocations(list.toJSON());
    log.info('revocations pushed', {
      generation: r.generation,
      revoked: r.revoked,
      nodes: r.nodes.map((n) => ({ node_id: n.node_id, outcome: n.outcome, generation: n.generation })),
    });
  }
}

/** Logs what a lifecycle tick did, one JSON line per kind of event (nothing for a quiet tick). */
export function logTick(log: TickLog, reason: string, t: TickReport): void {
  if (t.lost.length > 0) log.warn('instances lost', { tick: reason, instances: t.lost, dead_nodes: t.dead });
  for (const r of t.rescheduled) log.info('rescheduled', { tick: reason, ...r });
  for (const w of t.waiting) log.info('reschedule waiting', { tick: reason, ...w });
  for (const a of t.alerts)
    log.warn('alert', {
      alert_id: a.alert_id,
      instance_id: a.instance_id,
      node_id: a.node_id,
      reason: a.reason,
      detail: a.detail,
    });
  if (t.orphans_unloaded.length > 0)
    log.info('orphans unloaded', { tick: reason, instances: t.orphans_unloaded });
  if (t.adopted.length > 0) log.info('adopted back', { tick: reason, instances: t.adopted });
  if (t.restarted.length > 0) log.info('restarted after the lease', { tick: reason, instances: t.restarted });
  if (t.revoked.length > 0) log.warn('instances revoked', { tick: reason, instances: t.revoked });
  if (t.revocations_pushed.length > 0)
    log.info('revocations pushed', {
      tick: reason,
      nodes: t.revocations_pushed.map((n) => ({
        node_id: n.node_id,
        outcome: n.outcome,
        generation: n.generation,
        torn_down: n.torn_down,
        ...(n.reason === null ? {} : { error: n.reason }),
      })),
    });
  const s = t.settle;
  if (s.placed.length + s.nothing.length + s.pending.length > 0)
    log.info('settle', { tick: reason, placed: s.placed, nothing: s.nothing, pending: s.pending });
  if (t.errors.length > 0)
    log.warn('tick incomplete (retried on the next tick)', { tick: reason, errors: t.errors });
}
