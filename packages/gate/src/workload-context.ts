import type { NetworkLevel, NodeTier } from '@heddle/model';
import type { GateContext } from './context.js';
import type { PackageTrust } from './levels.js';

/** The resource cost a store pin is gated with: the store publishes no resource figures. */
export const STORE_PIN_RESOURCE_COST = 0.25;

/**
 * What the gate needs to know of a workload to build its context: the fields of `@heddle/runtime`'s
 * `RuntimeWorkload` it reads (a `RuntimeWorkload` is one), so that a caller without the runtime (the
 * controller) builds the same context as a host does.
 */
export interface GatedWorkload {
  /** The package kind (`cog`). */
  readonly kind: string;
  /** The package id, or `registry/id@version` for a store pin. */
  readonly ref: string;
  /** Public keys (hex) of the signers that vouched for it. */
  readonly signerKeys: readonly string[];
  /** BLAKE3 hashes (hex) of its files. */
  readonly artifactHashes: readonly string[];
  /**
   * A package this node verified (its cog body's `resources.cpu_pct` is read), or an operator's store
   * pin (`unattested` for a store cog the operator never pinned).
   */
  readonly source:
    | {
        readonly type: 'package';
        readonly verified: { readonly body: { readonly resources: { readonly cpu_pct: number } } };
      }
    | { readonly type: 'store_pin'; readonly unattested?: boolean };
}

/** What the caller knows about the node and the instance when it builds a gate context. */
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
 *   is the whole of a typical edge node; 1 when it is not a finite number),
 *   {@link STORE_PIN_RESOURCE_COST} for a store pin;
 * - `secrets`: always false. No adapter delivers operator secrets; the only credential an instance
 *   gets is its own ingest token;
 * - `package_id`: the workload's ref (the package id, or `registry/id@version`); `signer_keys` and
 *   `artifact_hashes` from the workload's revocation references.
 */
export function gateContextFor(workload: GatedWorkload, facts: HostContextFacts): GateContext {
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
