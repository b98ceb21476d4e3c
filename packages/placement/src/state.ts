import { PlacementError } from './errors.js';
import type { PlacementView } from './view.js';

/** What a placement takes on a node. */
export interface ReservationInput {
  /** Node the workload is placed on. */
  readonly node_id: string;
  /** Workload name (co-residency, spread, stickiness). */
  readonly workload: string;
  /** Package id, when known. */
  readonly package_id?: string;
  /** System memory (MB). */
  readonly memory_mb?: number;
  /** Accelerator memory (MB); taken from system memory on a `mem.unified` node. */
  readonly accel_memory_mb?: number;
  /** CPU in percent of one core. */
  readonly cpu_pct?: number;
  /** Capability ids this workload holds exclusively on that node. */
  readonly claims?: readonly string[];
  /** The node's labels when placed (for spread counts). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Workloads that must not share a node with this one. */
  readonly excludes?: readonly string[];
}

/** A held reservation. */
export interface Reservation extends ReservationInput {
  /** Reservation id (`r1`, `r2`, ... in order of reservation). */
  readonly id: string;
}

/** What reservations take on one node. */
export interface NodeUsage {
  /** System memory taken (MB), accelerator memory included on a unified node. */
  memory_mb: number;
  /** Accelerator memory taken (MB) on a node without unified memory. */
  accel_memory_mb: number;
  /** CPU taken (percent of one core). */
  cpu_pct: number;
  /** Capability ids held exclusively. */
  readonly claims: Set<string>;
  /** Instances per workload. */
  readonly workloads: Map<string, number>;
  /** Workloads excluded by residents (with how many residents exclude each). */
  readonly excluded: Map<string, number>;
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const v = (map.get(key) ?? 0) + by;
  if (v <= 0) map.delete(key);
  else map.set(key, v);
}

/**
 * The mutable side of placement, owned by the caller: reservations (resources already taken, so that
 * consecutive decisions see them), exclusive capability claims, resident workloads, revoked nodes and
 * revoked packages. `place` only reads it; {@link PlacementState.reserve} and
 * {@link PlacementState.release} change it. `generation` counts changes (the engine derives its
 * sampling start from it).
 */
export class PlacementState {
  readonly #usage = new Map<string, NodeUsage>();
  readonly #reservations = new Map<string, Reservation>();
  readonly #spread = new Map<string, Map<string, Map<string, number>>>();
  readonly #revokedNodes = new Set<string>();
  readonly #revokedPackages = new Set<string>();
  #next = 1;
  /** Incremented on every change. */
  generation = 0;

  /** Marks a node revoked (never placed on). */
  revokeNode(nodeId: string): void {
    this.#revokedNodes.add(nodeId);
    this.generation++;
  }

  /** True when the node is revoked. */
  isNodeRevoked(nodeId: string): boolean {
    return this.#revokedNodes.size !== 0 && this.#revokedNodes.has(nodeId);
  }

  /** Marks a package revoked (its workloads are placed nowhere). */
  revokePackage(packageId: string): void {
    this.#revokedPackages.add(packageId);
    this.generation++;
  }

  /** True when the package is revoked. */
  isPackageRevoked(packageId: string): boolean {
    return this.#revokedPackages.has(packageId);
  }

  /** What reservations take on `nodeId` (undefined when nothing). Do not modify it. */
  usage(nodeId: string): NodeUsage | undefined {
    return this.#usage.get(nodeId);
  }

  /** Instances of `workload` on nodes whose label `label` is `value` (`""` for nodes without it). */
  spreadCount(workload: string, label: string, value: string): number {
    return this.#spread.get(workload)?.get(label)?.get(value) ?? 0;
  }

  /** Every held reservation, oldest first. */
  reservations(): IterableIterator<Reservation> {
    return this.#reservations.values();
  }

  /** Number of held reservations. */
  get size(): number {
    return this.#reservations.size;
  }

  /**
   * Takes what a placement needs on its node. Accepts a {@link ReservationInput} or a decision that
   * placed (its `reservation`). With `view`, refuses with `reservation_conflict` a reservation that
   * would exceed the node's memory or CPU; it always refuses a claim on a capability already held.
   */
  reserve(
    input: ReservationInput | { readonly outcome: string; readonly reservation?: ReservationInput },
    view?: PlacementView,
  ): Reservation {
    let r: ReservationInput;
    if ('outcome' in input) {
      if (input.outcome !== 'placed' || input.reservation === undefined) {
        throw new PlacementError(
          'not_placed',
          `cannot reserve a decision whose outcome is ${input.outcome}`,
          {
            field: 'outcome',
          },
        );
      }
      r = input.reservation;
    } else r = input;
    const mem = r.memory_mb ?? 0;
    const accel = r.accel_memory_mb ?? 0;
    const cpu = r.cpu_pct ?? 0;
    const u = this.#usage.get(r.node_id);
    for (const c of r.claims ?? []) {
      if (u?.claims.has(c)) {
        throw new PlacementError('reservation_conflict', `${c} on ${r.node_id} is already held`, {
          field: 'claims',
        });
      }
    }
    const node = view?.get(r.node_id);
    if (view !== undefined) {
      if (node === undefined)
        throw new PlacementError('unknown_node', `no node ${r.node_id} in the view`, { field: 'node_id' });
      const sysNeed = (u?.memory_mb ?? 0) + mem + (node.unified ? accel : 0);
      if (sysNeed > Math.max(0, node.memory_mb)) {
        throw new PlacementError('reservation_conflict', `memory on ${r.node_id} would be overcommitted`, {
          field: 'memory_mb',
        });
      }
      if (!node.unified && (u?.accel_memory_mb ?? 0) + accel > node.accel_memory_mb) {
        throw new PlacementError(
          'reservation_conflict',
          `accelerator memory on ${r.node_id} would be overcommitted`,
          {
            field: 'accel_memory_mb',
          },
        );
      }
      if ((u?.cpu_pct ?? 0) + cpu > node.cpu_capacity) {
        throw new PlacementError('reservation_conflict', `cpu on ${r.node_id} would be overcommitted`, {
          field: 'cpu_pct',
        });
      }
    }
    const unified = node?.unified ?? false;
    const usage = u ?? this.#newUsage(r.node_id);
    usage.memory_mb += mem + (unified ? accel : 0);
    usage.accel_memory_mb += unified ? 0 : accel;
    usage.cpu_pct += cpu;
    for (const c of r.claims ?? []) usage.claims.add(c);
    bump(usage.workloads, r.workload, 1);
    for (const w of r.excludes ?? []) bump(usage.excluded, w, 1);
    this.#spreadAdd(r, 1);
    const id = `r${this.#next++}`;
    const held: Reservation = {
      ...r,
      id,
      ...(unified && accel > 0 ? { memory_mb: mem + accel, accel_memory_mb: 0 } : {}),
    };
    this.#reservations.set(id, held);
    this.generation++;
    return held;
  }

  /** Gives back what a reservation took. Throws `unknown_reservation` for an unknown id. */
  release(id: string): void {
    const r = this.#reservations.get(id);
    if (r === undefined)
      throw new PlacementError('unknown_reservation', `no reservation ${id}`, { field: 'id' });
    this.#reservations.delete(id);
    const u = this.#usage.get(r.node_id)!;
    u.memory_mb -= r.memory_mb ?? 0;
    u.accel_memory_mb -= r.accel_memory_mb ?? 0;
    u.cpu_pct -= r.cpu_pct ?? 0;
    for (const c of r.claims ?? []) u.claims.delete(c);
    bump(u.workloads, r.workload, -1);
    for (const w of r.excludes ?? []) bump(u.excluded, w, -1);
    this.#spreadAdd(r, -1);
    if (u.workloads.size === 0) this.#usage.delete(r.node_id);
    this.generation++;
  }

  #newUsage(nodeId: string): NodeUsage {
    const u: NodeUsage = {
      memory_mb: 0,
      accel_memory_mb: 0,
      cpu_pct: 0,
      claims: new Set(),
      workloads: new Map(),
      excluded: new Map(),
    };
    this.#usage.set(nodeId, u);
    return u;
  }

  #spreadAdd(r: ReservationInput, by: number): void {
    const labels = r.labels;
    if (labels === undefined) return;
    let byLabel = this.#spread.get(r.workload);
    if (byLabel === undefined) {
      byLabel = new Map();
      this.#spread.set(r.workload, byLabel);
    }
    for (const [label, value] of Object.entries(labels)) {
      let byValue = byLabel.get(label);
      if (byValue === undefined) {
        byValue = new Map();
        byLabel.set(label, byValue);
      }
      bump(byValue, value, by);
    }
  }
}
