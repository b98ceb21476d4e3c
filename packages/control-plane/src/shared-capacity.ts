import { randomBytes } from 'node:crypto';
import type { PlacementView } from '@heddle/placement';
import { idempotencyClaimHoldMs } from './idempotency.js';
import { resourcesOf } from './placement-life.js';
import type { PlaneContext } from './plane-context.js';
import type { ClaimSpec, ClaimTarget, PlaceClaim } from './reservations.js';
import type { NodeLoad, PlacementRecord } from './state-store.js';

// Capacity shared by several controllers (issue 22; docs/state.md "Capacity shared by several
// controllers"). The engine ranks nodes on this controller's in-memory reservations, which only its own
// writes update; the authority for "does this node have room" is the shared state. When a place claims a
// node, one store transaction (SERIALIZABLE on PostgreSQL, retried on a conflict; SQLite has one
// writer) reads what the node holds there (its live placements, its unsettled decisions, which include
// the places in flight, and its recent claims, written by any controller), checks the place's resources
// against the node's capacity, and writes the place's claim row. Of two controllers claiming one node
// at once, one transaction commits first; the other is run again, sees the first claim, and finds no
// room. The claim row gives way to the place's unsettled record when the place is sent (the record is
// written first, then the row removed), so its resources stay counted until the place settles (placed:
// the placement's own; nothing: removed).

/** The room a node offers, as the engine's view presents it. */
export interface NodeCapacity {
  /** System memory (MB); negative when the node reports none. */
  readonly memory_mb: number;
  /** CPU capacity in percent of one core (100 per core). */
  readonly cpu_capacity: number;
}

/**
 * Why `load` leaves no room on a node of `capacity` for `need` (the engine's own rule and words:
 * memory is checked when the place needs some, CPU always), or undefined when it fits.
 */
export function noRoom(
  load: NodeLoad,
  need: { readonly ram_mb: number; readonly cpu_pct: number },
  capacity: NodeCapacity,
): string | undefined {
  const held = (): string =>
    `held in the shared state by ${load.placements} live placement(s), ${load.unsettled} unsettled place(s) and ${load.claims} claim(s) of all controllers`;
  if (need.ram_mb > 0 && load.ram_mb + need.ram_mb > Math.max(0, capacity.memory_mb)) {
    const free = capacity.memory_mb - load.ram_mb;
    return `needs ${need.ram_mb} MB, ${free} MB free of ${capacity.memory_mb} MB (${load.ram_mb} MB ${held()})`;
  }
  if (load.cpu_pct + need.cpu_pct > capacity.cpu_capacity) {
    const free = capacity.cpu_capacity - load.cpu_pct;
    return `needs ${need.cpu_pct}% cpu, ${free}% free of ${capacity.cpu_capacity}% (${load.cpu_pct}% ${held()})`;
  }
  return undefined;
}

/**
 * Claims room for a place on `target.node_id` in the shared state, in one store transaction: the
 * node's load is read (claims older than the hold, {@link idempotencyClaimHoldMs}, are not counted,
 * and are removed when there are any), and when the place fits its claim row `claimId` is written. Returns undefined when claimed, or
 * why the node has no room.
 */
export function claimRoom(
  ctx: Pick<PlaneContext, 'store' | 'now' | 'config' | 'nodeId'>,
  claimId: string,
  target: ClaimTarget,
  spec: Pick<ClaimSpec, 'order_id' | 'memoryMb' | 'cpuPct'>,
  capacity: NodeCapacity,
): string | undefined {
  const now = ctx.now();
  const since = now - idempotencyClaimHoldMs(ctx.config);
  const store = ctx.store;
  return store.transaction(() => {
    const load = store.nodeLoad(target.node_id, since);
    if (load.stale_claims > 0) store.prunePlaceClaims(target.node_id, since);
    const why = noRoom(load, { ram_mb: spec.memoryMb, cpu_pct: spec.cpuPct }, capacity);
    if (why !== undefined) return why;
    store.putPlaceClaim({
      claim_id: claimId,
      node_id: target.node_id,
      order_id: spec.order_id,
      instance_id: target.instance_id,
      ram_mb: spec.memoryMb,
      cpu_pct: spec.cpuPct,
      claimed_by: ctx.nodeId,
      claimed_at_ms: now,
    });
    return undefined;
  });
}

/** Claim ids: `pc-`, 16 random hex per process, and a counter (unique across controllers). */
const CLAIM_PREFIX = `pc-${randomBytes(8).toString('hex')}-`;
let claims = 0;
function nextClaimId(): string {
  return `${CLAIM_PREFIX}${(++claims).toString(36)}`;
}

/** The capacity of `nodeId` in `view`, or undefined when the view does not hold it. */
function capacityIn(view: PlacementView, nodeId: string): NodeCapacity | undefined {
  const n = view.get(nodeId);
  return n === undefined ? undefined : { memory_mb: n.memory_mb, cpu_capacity: n.cpu_capacity };
}

/**
 * Claims `target` for a place in flight: in this controller's reservations (what the engine ranks on,
 * see `Reservations.claim`) and in the shared state ({@link claimRoom}: the authority). Returns the
 * claim, or why the shared state leaves no room there (then nothing is held). The claim's `move`
 * checks both again on the next candidate; its row leaves the shared state when the place is sent
 * (`claimId`, `sent`: the unsettled record, written first, takes over; see `markInProgress`) or
 * released.
 */
export function claimShared(
  ctx: PlaneContext,
  target: ClaimTarget,
  spec: ClaimSpec,
  view: PlacementView,
): PlaceClaim | string {
  const inner = ctx.reservations.claim(target, spec);
  const claimId = nextClaimId();
  let row = false;
  const take = (t: ClaimTarget, v: PlacementView): string | undefined => {
    const capacity = capacityIn(v, t.node_id);
    if (capacity === undefined) return `node ${t.node_id} is no longer in the view`;
    const why = claimRoom(ctx, claimId, t, spec, capacity);
    row = why === undefined;
    return why;
  };
  const drop = (): void => {
    if (!row) return;
    row = false;
    ctx.store.removePlaceClaim(claimId);
  };
  const first = take(target, view);
  if (first !== undefined) {
    inner.release();
    return first;
  }
  return {
    get target() {
      return inner.target;
    },
    get claimId() {
      return row ? claimId : undefined;
    },
    sent() {
      row = false;
    },
    move(next, v) {
      drop();
      const why = inner.move(next, v) ?? take(next, v);
      if (why !== undefined) inner.release();
      return why;
    },
    placed(instanceId) {
      inner.placed(instanceId);
      drop();
    },
    unsettled(decisionId) {
      inner.unsettled(decisionId);
      drop();
    },
    release() {
      inner.release();
      drop();
    },
  };
}

/**
 * A live placement recorded before schema v10 whose order carried no package facts holds nothing in
 * the shared state: when this controller holds its package, its resources are written into the record
 * (at start, see `ControlPlane`), so every controller's check counts them from then on. `cache` is
 * shared with the reservations restored at the same time.
 */
export function fillPlacementResources(
  ctx: PlaneContext,
  p: PlacementRecord,
  cache: Map<string, { ram_mb: number; cpu_pct: number }>,
): void {
  if (p.ram_mb !== undefined || p.manifest_hash === '') return;
  const r = resourcesOf(ctx, p.manifest_hash, cache);
  // Zero for a package not held here (unreadable): left for a controller that holds it.
  if (r.ram_mb === 0 && r.cpu_pct === 0) return;
  ctx.store.putPlacement({ ...p, ram_mb: r.ram_mb, cpu_pct: r.cpu_pct });
}
