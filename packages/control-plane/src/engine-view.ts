import { type NodeInput, PlacementView } from '@heddle/placement';
import type { NodeBook } from './node-book.js';
import { SEED_CAPABILITIES } from './seed-nodes.js';
import type { StateStore } from './state-store.js';

/**
 * The engine's view (DESIGN 10): every known node with a tier and held facts, with liveness, and
 * without the `runtime.<route>` (and `runtime.<route>.*`, such as `runtime.container.docker`)
 * capabilities of routes its `workload-host` does not advertise (a node without an advertisement
 * offers no runtime at all). Nodes without a tier (their key changed) are left out, and so are the
 * nodes in `exclude` (those where the order would meet another order's instance).
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
      capabilities: held.capabilities.filter((c) => !c.id.startsWith('runtime.') || offered(routes, c.id)),
      expires_at_ms: held.expires_at_ms,
    });
  }
  return PlacementView.create(nodes, { validate: false });
}

/** Whether capability `id` (`runtime.<route>` or `runtime.<route>.<more>`) is of an advertised route. */
function offered(routes: ReadonlySet<string>, id: string): boolean {
  const rest = id.slice('runtime.'.length);
  const dot = rest.indexOf('.');
  return routes.has(rest) || (dot > 0 && routes.has(rest.slice(0, dot)));
}
