import { type NodeInput, PlacementView } from '@heddle/placement';
import type { NodeBook } from './node-book.js';
import type { PlaneContext } from './plane-context.js';
import type { NodeMetaRecord, TargetRecord } from './state-store.js';

/**
 * The engine's view: every known node with a tier, as its driver presents it (`NodeDriver.viewNode`),
 * with liveness. Nodes without a tier (their key changed), nodes whose kind has no driver here, and
 * the nodes in `exclude` (those where the order would meet another order's instance) are left out.
 */
export function engineView(
  ctx: Pick<PlaneContext, 'book' | 'store' | 'drivers'>,
  now: number,
  exclude?: ReadonlyMap<string, string>,
): PlacementView {
  const nodes: NodeInput[] = [];
  const meta = new Map(ctx.store.listNodeMeta().map((m) => [m.node_id, m]));
  for (const t of ctx.store.listTargets()) {
    if (t.tier === null || exclude?.has(t.node_id) === true) continue;
    const node = ctx.drivers.find(t)?.viewNode(ctx.book, t, now);
    if (node !== undefined) nodes.push(withMeta(node, meta.get(t.node_id)));
  }
  return PlacementView.create(nodes, { validate: false });
}

/** A node as the engine sees it with what the operator set on it: its labels and its cordon. */
export function withMeta(node: NodeInput, meta: NodeMetaRecord | undefined): NodeInput {
  if (meta === undefined) return node;
  return {
    ...node,
    ...(Object.keys(meta.labels).length === 0 ? {} : { labels: meta.labels }),
    ...(meta.cordoned ? { cordoned: true } : {}),
  };
}

/**
 * What a `heddle-host` offers the engine: its held signed facts, without the `runtime.<route>` (and
 * `runtime.<route>.*`, such as `runtime.container.docker`) capabilities of routes its `workload-host`
 * does not advertise (a node without an advertisement offers no runtime at all); undefined while no
 * facts are held.
 */
export function hostViewNode(book: NodeBook, t: TargetRecord, now: number): NodeInput | undefined {
  const held = book.cache.get(t.node_id);
  if (held === undefined || t.tier === null) return undefined;
  const routes = new Set(t.routes);
  return {
    node_id: t.node_id,
    tier: t.tier,
    liveness: book.liveness.get(t.node_id, now),
    capabilities: held.capabilities.filter((c) => !c.id.startsWith('runtime.') || offered(routes, c.id)),
    expires_at_ms: held.expires_at_ms,
  };
}

/** Whether capability `id` (`runtime.<route>` or `runtime.<route>.<more>`) is of an advertised route. */
function offered(routes: ReadonlySet<string>, id: string): boolean {
  const rest = id.slice('runtime.'.length);
  const dot = rest.indexOf('.');
  return routes.has(rest) || (dot > 0 && routes.has(rest.slice(0, dot)));
}
