import type { PlaceCheck } from '@heddle/control-plane/driver';
import { type Action, type GateContext, type GatedWorkload, gateContextFor } from '@heddle/gate';
import { type NodeTier, routeNetwork } from '@heddle/model';

/**
 * The gate context of an operator's store pin on a Cognitum Seed at `tier`: the context the
 * controller's WorkloadHost over the Seed's `SeedApiRuntime` builds for install, load and start
 * (`gateContextFor`: trust `operator_attested`, the store pin's resource cost, no secrets, no
 * emulation), with the Seed route's network.
 */
export function seedContext(w: GatedWorkload, tier: NodeTier): GateContext {
  return gateContextFor(w, { nodeTier: tier, network: routeNetwork('remote.api'), emulated: false });
}

/**
 * The checks of placing a store pin on a Seed: `workload.place` (the controller's attempt), then
 * `workload.install`, `workload.load` and, when the order starts it, `workload.start`, which the
 * controller's own WorkloadHost over the Seed asks of the same gate with the same context.
 */
export function seedChecks(w: GatedWorkload, tier: NodeTier, start: boolean): PlaceCheck[] {
  const context = seedContext(w, tier);
  const actions: Action[] = ['workload.place', 'workload.install', 'workload.load'];
  if (start) actions.push('workload.start');
  return actions.map((action) => ({ action, context }));
}
