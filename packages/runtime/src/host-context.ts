import type { GateContext, NetworkLevel, NodeTier, PackageTrust } from '@heddle/gate';
import type { RuntimeWorkload } from './workload.js';

/** The resource cost a store pin is gated with: the store publishes no resource figures. */
export const STORE_PIN_RESOURCE_COST = 0.25;

/** What the WorkloadHost knows about the node and the instance when it builds a gate context. */
export interface HostContextFacts {
  /** The node's operator-assigned tier, as it is now. */
  readonly nodeTier: NodeTier;
  /** What the adapter gives instances (`WorkloadRuntime.networkExposure()`). */
  readonly network: NetworkLevel;
  /** Whether the adapter's admission said the workload runs under emulation. */
  readonly emulated: boolean;
}

/**
 * The gate context of an action on `workload`, built from verified facts only:
 *
 * - `package_trust`: `pinned_signer` for a package this node verified against its own anchors,
 *   `operator_attested` for an operator's store pin, `unsigned` for a store cog the operator never
 *   pinned (a device's own cog, preempted for a console run);
 * - `resource_cost`: the cog's `resources.cpu_pct` / 400 clamped to 0..1 for a package (four cores
 *   is the whole of a typical edge node), {@link STORE_PIN_RESOURCE_COST} for a store pin;
 * - `secrets`: always false. No adapter delivers operator secrets; the only credential an instance
 *   gets is its own ingest token;
 * - `package_id`: the workload's ref (the package id, or `registry/id@version`); `signer_keys` and
 *   `artifact_hashes` from the workload's revocation references.
 */
export function gateContextFor(workload: RuntimeWorkload, facts: HostContextFacts): GateContext {
  const src = workload.source;
  let trust: PackageTrust;
  let cost: number;
  if (src.type === 'package') {
    trust = 'pinned_signer';
    const cpu = src.verified.body.resources.cpu_pct;
    cost = Number.isFinite(cpu) ? Math.min(1, Math.max(0, cpu / 400)) : 1;
  } else {
    trust = src.unattested === true ? 'unsigned' : 'operator_attested';
    cost = STORE_PIN_RESOURCE_COST;
  }
  return {
    kind: workload.kind,
    package_trust: trust,
    node_tier: facts.nodeTier,
    network: facts.network,
    secrets: false,
    emulated: facts.emulated,
    resource_cost: cost,
    package_id: workload.ref,
    signer_keys: [...workload.signerKeys],
    artifact_hashes: [...workload.artifactHashes],
  };
}
