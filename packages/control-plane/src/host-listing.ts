import type { JsonValue } from '@heddle/envelope';
import type { LifecycleState } from '@heddle/model';
import type { HostListingAnswer } from '@heddle/protocol';
import { PLACEMENT_STATES, type PlacementRecord, type PlacementState } from './state-store.js';

/** One instance of a host's `workload.status` listing, as the controller reads it. */
export interface ListedInstance {
  readonly instance_id: string;
  readonly decision_id: string | null;
  /** The node id that placed it. */
  readonly requester: string | null;
  readonly desired_running: boolean;
  /** The adapter's state (`loaded`, `running`, `exited`, ...). */
  readonly state: string;
  /** Run mode type (`once`, `interval`, `listener`). */
  readonly mode: string | null;
  /** The host's lifecycle state (null when a Seed's adapter reports none). */
  readonly life: LifecycleState | null;
  /** Stopped by the host because the controller lease expired. */
  readonly lease_stopped: boolean;
  /** Supervisor restarts in the current budget window. */
  readonly restarts: number;
  /** Re-adopted after a restart of the host process. */
  readonly adopted: boolean;
}

/** An instance a host took down or could not re-adopt. */
export interface DepartedEntry {
  readonly instance_id: string;
  readonly reason: 'unloaded' | 'revoked' | 'lost';
  readonly at_ms: number;
}

/** A host's listing (`workload.status` without an instance id, with `include_departed`). */
export interface HostListing {
  readonly instances: readonly ListedInstance[];
  readonly departed: readonly DepartedEntry[];
  /** Decisions the host is still acting on. */
  readonly in_flight: readonly string[];
}

/**
 * The controller's reading of a host's listing (an answer already parsed with the protocol's
 * `HostListingAnswerSchema` by the Caller, so a listing that does not fit was refused as a whole:
 * reading it partly would make its missing instances look lost). A decision id of `""` reads as none.
 */
export function listingOf(answer: HostListingAnswer): HostListing {
  const instances = answer.instances.map(
    (i): ListedInstance => ({
      instance_id: i.instance_id,
      decision_id: i.decision_id === '' ? null : i.decision_id,
      requester: i.requester,
      desired_running: i.desired_running,
      state: i.state,
      mode: i.mode.type,
      life: i.life,
      lease_stopped: i.lease_stopped,
      restarts: i.restarts,
      adopted: i.adopted,
    }),
  );
  const departed = (answer.departed ?? []).map(
    (d): DepartedEntry => ({ instance_id: d.instance_id, reason: d.reason, at_ms: d.at_ms }),
  );
  return { instances, departed, in_flight: answer.in_flight.map((d) => d.decision_id) };
}

const CONTROLLER: ReadonlySet<string> = new Set(PLACEMENT_STATES);

/**
 * The controller state an instance is in by its host's word: its `life` when the host reports one
 * (transient host states such as `fetching` or `stopping` give none: wait for the next listing), else
 * derived from the adapter's state (`exited` is `finished` for a `once` run, still `running` between
 * runs of an interval, `stopped` otherwise). Undefined when it cannot be told.
 */
export function lifeOf(i: Pick<ListedInstance, 'life' | 'state' | 'mode'>): PlacementState | undefined {
  // cast: CONTROLLER.has(i.life) just said it is a placement state
  if (i.life !== null) return CONTROLLER.has(i.life) ? (i.life as PlacementState) : undefined;
  switch (i.state) {
    case 'running':
      return 'running';
    case 'loaded':
      return 'loaded';
    case 'stopped':
      return 'stopped';
    case 'failed':
      return 'failed';
    case 'exited':
      return i.mode === 'once' ? 'finished' : i.mode === 'interval' ? 'running' : 'stopped';
    default:
      return undefined;
  }
}

/**
 * Whether the instance a host lists as `i` is the placement `p` of this controller's state (and so
 * reconciled here), rather than another deployment's instance that happens to have the same id on
 * that host (an instance id derives from the package, config values, run mode and node, not from who
 * placed it). It is when the host names no requester, when this controller (`nodeId`) placed it, or
 * when the host's `decision_id` (the place decision it acted on) is the placement's own decision: a
 * decision id is the chain hash of a decision of a controller of this state, so any controller
 * sharing the state placed it. Several controllers sharing one PostgreSQL state therefore reconcile
 * each other's instances; a controller of another state sharing the host is never touched.
 */
export function ofThisState(
  nodeId: string,
  p: Pick<PlacementRecord, 'decision_id'>,
  i: Pick<ListedInstance, 'requester' | 'decision_id'>,
): boolean {
  return i.requester === null || i.requester === nodeId || i.decision_id === p.decision_id;
}
