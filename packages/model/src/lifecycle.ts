import { HeddleError, type JsonValue } from '@heddle/envelope';

/**
 * Where an instance is in its life (docs/lifecycle.md). The host and the controller each keep one per
 * instance and move it only along {@link LIFECYCLE_TRANSITIONS}:
 *
 * - `requested`: the controller decided to place it (nothing sent yet, or the answer is awaited);
 * - `placed`: the host accepted the place; `fetching` / `verified`: its package is being fetched, then
 *   passed verification against the host's own anchors; `loaded`: the adapter prepared it;
 * - `running`; `unhealthy`: a health check failed; `restarting`: the supervisor waits out its backoff;
 * - `stopping`, `stopped` (on purpose), `finished` (a `once` run ended by itself), `failed` (it cannot
 *   be made to run: a failed load or start, or the restart budget spent);
 * - `lost`: its node is dead or forgot it; `rescheduled`: a replacement was placed elsewhere;
 * - `revoked`: torn down because a revocation names it; `unloaded`: removed (final).
 */
export type LifecycleState =
  | 'requested'
  | 'placed'
  | 'fetching'
  | 'verified'
  | 'loaded'
  | 'running'
  | 'unhealthy'
  | 'restarting'
  | 'stopping'
  | 'stopped'
  | 'finished'
  | 'failed'
  | 'lost'
  | 'rescheduled'
  | 'revoked'
  | 'unloaded';

// Every state but the final one can be lost (its node died or forgot it), revoked or unloaded, except
// where noted; the rest is the table below.
const GONE: readonly LifecycleState[] = ['lost', 'revoked', 'unloaded'];

const TABLE: Readonly<Record<LifecycleState, readonly LifecycleState[]>> = {
  requested: ['placed', 'loaded', 'running', 'failed', ...GONE],
  // `verified` straight from `placed`: a package the host already holds is verified again, not fetched.
  placed: ['fetching', 'verified', 'loaded', 'running', 'failed', ...GONE],
  fetching: ['verified', 'failed', ...GONE],
  verified: ['loaded', 'failed', ...GONE],
  loaded: ['running', 'stopping', 'stopped', 'failed', ...GONE],
  running: ['unhealthy', 'restarting', 'stopping', 'stopped', 'finished', 'failed', ...GONE],
  unhealthy: ['running', 'restarting', 'stopping', 'stopped', 'failed', ...GONE],
  restarting: ['running', 'stopping', 'stopped', 'failed', ...GONE],
  stopping: ['stopped', 'failed', ...GONE],
  stopped: ['running', 'restarting', 'failed', ...GONE],
  finished: ['running', 'stopped', 'failed', ...GONE],
  failed: ['running', 'restarting', 'stopped', ...GONE],
  // A lost instance found again on its node is adopted back in the state it is in there.
  lost: ['running', 'loaded', 'stopped', 'finished', 'failed', 'rescheduled', 'revoked', 'unloaded'],
  // A replaced instance is an orphan if its node comes back: it can only be removed.
  rescheduled: ['unloaded'],
  revoked: ['unloaded'],
  unloaded: [],
};

/** The transition table: the states each state may move to. `unloaded` is final. */
export const LIFECYCLE_TRANSITIONS: Readonly<Record<LifecycleState, readonly LifecycleState[]>> =
  Object.freeze(TABLE);

/** Every lifecycle state, in the order of {@link LIFECYCLE_TRANSITIONS}. */
export const LIFECYCLE_STATES: readonly LifecycleState[] = Object.freeze(
  // cast: Object.keys widens to string[]; the keys of TABLE are exactly the LifecycleStates
  Object.keys(TABLE) as LifecycleState[],
);

/** True when `to` may follow `from` (staying in the same state is not a transition). */
export function canTransition(from: LifecycleState, to: LifecycleState): boolean {
  return TABLE[from].includes(to);
}

/** True for states in which the instance no longer exists where it was placed. */
export function isGone(state: LifecycleState): boolean {
  return state === 'unloaded' || state === 'rescheduled' || state === 'revoked' || state === 'lost';
}

/** A move the table does not allow: a bug in the caller, never an operator's mistake. */
export class LifecycleError extends HeddleError {
  declare readonly code: 'illegal_transition';

  constructor(instanceId: string, from: LifecycleState, to: LifecycleState) {
    super('illegal_transition', `instance ${instanceId}: ${from} -> ${to} is not a lifecycle transition`, {
      field: 'state',
    });
  }
}

/** One transition as it is chained (`workload.lifecycle`) and kept in an instance's history. */
export interface LifecycleTransition {
  readonly instance_id: string;
  readonly from: LifecycleState;
  readonly to: LifecycleState;
  /** Why, in a few words (`restart budget spent`, `node dead`, `lease expired`, ...). */
  readonly reason: string;
  readonly at_ms: number;
}

/** How many transitions an {@link InstanceLife} remembers. */
export const LIFECYCLE_HISTORY = 32;

/**
 * One instance's state machine: its state and its last {@link LIFECYCLE_HISTORY} transitions.
 * {@link InstanceLife.to} refuses a move the table does not allow with a {@link LifecycleError}.
 */
export class InstanceLife {
  readonly instanceId: string;
  #state: LifecycleState;
  #sinceMs: number;
  readonly #history: LifecycleTransition[] = [];

  constructor(instanceId: string, state: LifecycleState, atMs: number) {
    this.instanceId = instanceId;
    this.#state = state;
    this.#sinceMs = atMs;
  }

  /** The current state. */
  get state(): LifecycleState {
    return this.#state;
  }

  /** Since when it has been in {@link state} (Unix ms). */
  get sinceMs(): number {
    return this.#sinceMs;
  }

  /** The remembered transitions, oldest first. */
  get history(): readonly LifecycleTransition[] {
    return this.#history;
  }

  /**
   * Moves to `to` and returns the transition, or undefined when already there (nothing to record).
   * Throws {@link LifecycleError} for a move the table does not allow; the state is then unchanged.
   */
  to(to: LifecycleState, reason: string, atMs: number): LifecycleTransition | undefined {
    const from = this.#state;
    if (from === to) return undefined;
    if (!canTransition(from, to)) throw new LifecycleError(this.instanceId, from, to);
    this.#state = to;
    this.#sinceMs = atMs;
    const t: LifecycleTransition = { instance_id: this.instanceId, from, to, reason, at_ms: atMs };
    this.#history.push(t);
    if (this.#history.length > LIFECYCLE_HISTORY) this.#history.shift();
    return t;
  }
}

/** A transition as a chain payload, with the side that made it (`host` or `controller`) and its node. */
export function lifecyclePayload(
  t: LifecycleTransition,
  side: 'host' | 'controller',
  node: string,
  extra: { readonly [key: string]: JsonValue } = {},
): { [key: string]: JsonValue } {
  return { ...extra, side, node, instance_id: t.instance_id, from: t.from, to: t.to, reason: t.reason };
}
