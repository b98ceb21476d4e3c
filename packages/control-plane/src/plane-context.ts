import type { Chain } from '@heddle/chain';
import type { Gate } from '@heddle/gate';
import { PlacementState } from '@heddle/placement';
import type { Caller } from './caller.js';
import type { PlaneConfig } from './config.js';
import type { NodeBook } from './node-book.js';
import type { PackageStore } from './package-store.js';
import type { SeedHosts } from './seed-nodes.js';
import type { PlacementRecord, StateStore } from './state-store.js';

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
  /** Resource reservations of the live placements (rebuilt from the store on open). */
  readonly reservations: Reservations;
  /** The controller's governed hosts for Cognitum Seeds. */
  readonly seeds: SeedHosts;
  /** The controller's state directory. */
  readonly stateDir: string;
  /** Decisions whose place is being dispatched by this process right now (settling leaves them alone). */
  readonly inProgress: Set<string>;
}

/** Resource reservations per instance, so that the engine sees what the controller already placed. */
export class Reservations {
  readonly state: PlacementState = new PlacementState();
  readonly #byInstance = new Map<string, string>();

  /** Reserves `memory_mb` and `cpu_pct` for `p` on its node (once per instance). */
  hold(
    p: Pick<PlacementRecord, 'instance_id' | 'node_id' | 'workload' | 'package_id'>,
    memoryMb: number,
    cpuPct: number,
  ): void {
    if (this.#byInstance.has(p.instance_id)) return;
    const r = this.state.reserve({
      node_id: p.node_id,
      workload: p.workload,
      package_id: p.package_id,
      memory_mb: memoryMb,
      cpu_pct: cpuPct,
    });
    this.#byInstance.set(p.instance_id, r.id);
  }

  /** Releases what `instanceId` held. */
  release(instanceId: string): void {
    const id = this.#byInstance.get(instanceId);
    if (id === undefined) return;
    this.state.release(id);
    this.#byInstance.delete(instanceId);
  }
}
