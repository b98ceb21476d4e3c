import { canonicalJson, type JsonValue } from '@heddle/envelope';
import { deriveInstanceId, isGone } from '@heddle/model';
import { PlaneError } from './errors.js';
import type { PlaneContext } from './plane-context.js';
import type { ClaimSpec } from './reservations.js';
import type { OrderRecord } from './state-store.js';

// Each acknowledged order gets its own instance (issue 15 item 8). A host derives an instance's id
// from (package id, config values, run mode, node id) (docs/protocol.md), so two orders for the same package
// with the same values and mode land on the same instance when they meet on one node. The controller
// computes that id for each node and never sends a place that would meet another order's instance:
// an unpinned order skips those nodes, a pinned one is refused with `duplicate_instance`.

/** The instance id `nodeId` derives when `order` is placed there (docs/protocol.md, `deriveInstanceId`). */
export function expectedInstanceId(
  order: Pick<OrderRecord, 'workload' | 'package_id' | 'values' | 'mode'>,
  nodeId: string,
): string {
  return deriveInstanceId(order.workload, order.package_id, order.values, order.mode, nodeId);
}

/**
 * What the instance id of `order` derives from besides the node (workload, package, config values and
 * run mode, as canonical JSON): two orders of one identity meet on a node, two of different
 * identities never do.
 */
export function instanceIdentity(
  order: Pick<OrderRecord, 'workload' | 'package_id' | 'values' | 'mode'>,
): string {
  // cast: an order's values and mode are JSON (parsed at the boundary)
  return canonicalJson([order.workload, order.package_id, order.values, order.mode] as unknown as JsonValue);
}

/**
 * The nodes where `order` would meet an instance that another order holds (a live placement), may
 * have placed (an unsettled decision) or is placing right now (a place in flight), each with why.
 */
export function takenNodes(ctx: PlaneContext, order: OrderRecord): Map<string, string> {
  const taken = new Map<string, string>();
  // Every live placement, place in flight and unsettled decision holds a reservation, indexed by
  // instance identity: only those of this order's identity are looked at.
  for (const h of ctx.reservations.holders(order.package_id, instanceIdentity(order))) {
    if (taken.has(h.node_id) || expectedInstanceId(order, h.node_id) !== h.instance_id) continue;
    if (h.kind === 'instance') {
      const p = ctx.store.getPlacement(h.instance_id);
      if (p === undefined || isGone(p.state)) continue;
      taken.set(
        h.node_id,
        `already holds the identical instance ${p.instance_id} (order ${p.order_id}, ${p.state}): same package, config values and mode`,
      );
    } else if (h.kind === 'claim') {
      taken.set(
        h.node_id,
        `order ${h.order_id} is placing the identical instance ${h.instance_id} there right now`,
      );
    } else {
      taken.set(
        h.node_id,
        `order ${h.order_id} may have placed the identical instance ${h.instance_id} there (its answer was lost; see unsettled)`,
      );
    }
  }
  return taken;
}

/** The refusal of a pinned order whose node already holds (or is placing) the identical instance. */
export function duplicateInstance(order: OrderRecord, nodeId: string, why: string): PlaneError {
  return new PlaneError(
    'duplicate_instance',
    `${order.workload}: node ${nodeId} ${why}; each order gets its own instance, so give other config values or another node, or stop and unload that instance first`,
    { field: 'node', reasons: { [nodeId]: why } },
  );
}

/** What a claim of `order` reserves. */
export function claimSpec(
  order: OrderRecord,
  resources: { readonly ram_mb: number; readonly cpu_pct: number },
): ClaimSpec {
  return {
    order_id: order.order_id,
    identity: instanceIdentity(order),
    workload: order.workload,
    package_id: order.package_id,
    memoryMb: resources.ram_mb,
    cpuPct: resources.cpu_pct,
  };
}
