import type { Chain } from '@heddle/chain';
import type { Gate } from '@heddle/gate';
import type { PlaneApprovals } from './approvals.js';
import type { Caller } from './caller.js';
import type { PlaneConfig } from './config.js';
import type { NodeBook } from './node-book.js';
import type { NodeDrivers } from './node-drivers.js';
import type { PackageStore } from './package-store.js';
import type { PlaceResult } from './place.js';
import type { Reservations } from './reservations.js';
import type { StateStore } from './state-store.js';

/** The chain source of a controller's placement records. */
export const PLANE_CHAIN_SOURCE = 'workload.placement';

/** What the control plane's operations share. */
export interface PlaneContext {
  /** The controller's node id (the agent of its gate checks, the requester of its calls). */
  readonly nodeId: string;
  readonly store: StateStore;
  readonly book: NodeBook;
  readonly packages: PackageStore;
  readonly caller: Caller;
  readonly gate: Gate;
  readonly chain: Chain;
  readonly config: PlaneConfig;
  readonly now: () => number;
  /** Resource reservations of the live placements (rebuilt from the store on open), places in flight and unsettled decisions. */
  readonly reservations: Reservations;
  /** The driver of each kind of node (every call about a node goes through its kind's driver). */
  readonly drivers: NodeDrivers;
  /** The controller's state directory. */
  readonly stateDir: string;
  /** Decisions whose place is being dispatched by this process right now (settling leaves them alone). */
  readonly inProgress: Set<string>;
  /** Places running in this process under an idempotency key (a retry meanwhile waits for its answer). */
  readonly idempotent: Map<string, Promise<PlaceResult>>;
  /** The approval queue's controller side, when the gate has a queue (a defer then holds the place). */
  readonly approvals?: PlaneApprovals;
}
