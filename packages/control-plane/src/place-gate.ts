import { type Action, type GateContext, type GatedWorkload, gateContextFor } from '@heddle/gate';
import { type NodeTier, parseVariantName, routeNetwork } from '@heddle/model';
import type { CogBody, VerifiedWorkload } from '@heddle/package';
import type { GovernanceVerdict, ViewNode } from '@heddle/placement';
import { verdictOf } from './place-common.js';
import type { PlaneContext } from './plane-context.js';

// What the controller's own gate is asked when it places: one list per route, used both by the engine
// (a dry run of each check, as the decision's governance) and by the real place (the same contexts,
// checked and chained), so a dry run says "chosen" exactly when the real place gets past the gate.

/**
 * The gate context of placing `verified` as `variant` on `node` (the controller verified the package
 * against its own anchors: `pinned_signer`): the network of the variant's route (its `route` in the
 * body, else the one its name parses to; `egress`, the most exposed, when neither names a known route),
 * `emulated` when the emulated alternative runs, and as
 * `resource_cost` the cog's memory over the node's (1,024 MB when the node reports none).
 */
export function placeContext(
  verified: VerifiedWorkload<CogBody>,
  variant: string,
  node: Pick<ViewNode, 'tier' | 'memory_mb'>,
  emulated: boolean,
): GateContext {
  const size = node.memory_mb > 0 ? node.memory_mb : 1024;
  const declared = Object.hasOwn(verified.body.variants, variant)
    ? verified.body.variants[variant]?.route
    : undefined;
  return {
    kind: verified.kind,
    package_trust: 'pinned_signer',
    node_tier: node.tier,
    network: routeNetwork(declared ?? parseVariantName(variant)?.route),
    secrets: false,
    emulated,
    resource_cost: Math.min(1, verified.body.resources.ram_mb / size),
    package_id: verified.packageId,
    signer_keys: [...verified.signerKeys],
    artifact_hashes: [...verified.artifactHashes],
  };
}

/** One check of the controller's gate on the way to an instance. */
export interface PlaceCheck {
  /** The action asked. */
  readonly action: Action;
  /** Its context. */
  readonly context: GateContext;
}

/**
 * The controller-side checks of placing a package variant on a host: `workload.place` with
 * {@link placeContext} (the host's own gate checks load and start against its own policy, which the
 * controller does not hold).
 */
export function packageChecks(
  verified: VerifiedWorkload<CogBody>,
  variant: string,
  node: Pick<ViewNode, 'tier' | 'memory_mb'>,
  emulated: boolean,
): PlaceCheck[] {
  return [{ action: 'workload.place', context: placeContext(verified, variant, node, emulated) }];
}

/**
 * The engine's governance verdict for a node: each check dry-run (nothing chained) in order; the first
 * that is not a permit is the verdict, its action named in the reason.
 */
export function dryRunChecks(ctx: PlaneContext, checks: readonly PlaceCheck[]): GovernanceVerdict {
  for (const c of checks) {
    const v = verdictOf(ctx.gate.dryRun(ctx.nodeId, c.action, c.context).decision);
    if (v.verdict === 'permit') continue;
    return checks.length === 1 ? v : { ...v, reason: `${c.action}: ${v.reason}` };
  }
  return { verdict: 'permit' };
}
