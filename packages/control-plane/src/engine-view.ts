import type { GateContext } from '@heddle/gate';
import type { CogBody, VerifiedWorkload } from '@heddle/package';
import { type NodeInput, PlacementView, type ViewNode } from '@heddle/placement';
import type { NodeBook } from './node-book.js';
import { SEED_CAPABILITIES } from './seed-nodes.js';
import type { StateStore } from './state-store.js';

/**
 * The engine's view (DESIGN 10): every known node with a tier and held facts, with liveness, and
 * without the `runtime.<route>` capabilities of routes its `workload-host` does not advertise (a node
 * without an advertisement offers no runtime at all). Nodes without a tier (their key changed) are
 * left out, and so are the nodes in `exclude` (those where the order would meet another order's instance).
 */
export function engineView(
  book: NodeBook,
  store: StateStore,
  now: number,
  exclude?: ReadonlyMap<string, string>,
): PlacementView {
  const nodes: NodeInput[] = [];
  for (const t of store.listTargets()) {
    if (t.tier === null || exclude?.has(t.node_id) === true) continue;
    if (t.seed !== undefined && t.seed !== null) {
      // A Seed signs no facts: what it offers is what its adapter claims.
      nodes.push({
        node_id: t.node_id,
        tier: t.tier,
        liveness: book.liveness.get(t.node_id, now),
        capabilities: SEED_CAPABILITIES,
      });
      continue;
    }
    const held = book.cache.get(t.node_id);
    if (held === undefined) continue;
    const routes = new Set(t.routes);
    nodes.push({
      node_id: t.node_id,
      tier: t.tier,
      liveness: book.liveness.get(t.node_id, now),
      capabilities: held.capabilities.filter(
        (c) => !c.id.startsWith('runtime.') || routes.has(c.id.slice('runtime.'.length)),
      ),
      expires_at_ms: held.expires_at_ms,
    });
  }
  return PlacementView.create(nodes, { validate: false });
}

/** The network a route gives an instance, as the adapters report it (native: egress; wasi: none). */
const ROUTE_NETWORK: Readonly<Record<string, GateContext['network']>> = {
  native: 'egress',
  wasi: 'none',
  container: 'none',
};

/** The route of a variant name (`x86_64-native` to `native`). */
export function routeOf(variant: string): string {
  return variant.slice(variant.lastIndexOf('-') + 1);
}

/**
 * The gate context of placing `verified` as `variant` on `node` (the controller verified the package
 * against its own anchors: `pinned_signer`). `resource_cost` is the cog's memory over the node's.
 */
export function placeContext(
  verified: VerifiedWorkload<CogBody>,
  variant: string,
  node: Pick<ViewNode, 'tier' | 'memory_mb'>,
  emulated: boolean,
): GateContext {
  const size = node.memory_mb > 0 ? node.memory_mb : 1024;
  return {
    kind: verified.kind,
    package_trust: 'pinned_signer',
    node_tier: node.tier,
    network: ROUTE_NETWORK[routeOf(variant)] ?? 'egress',
    secrets: false,
    emulated,
    resource_cost: Math.min(1, verified.body.resources.ram_mb / size),
    package_id: verified.packageId,
    signer_keys: [...verified.signerKeys],
    artifact_hashes: [...verified.artifactHashes],
  };
}
