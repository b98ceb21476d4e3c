import type { NodeFactsCache } from './facts-cache.js';
import type { LivenessTracker } from './liveness.js';
import { type NodeInput, PlacementView } from './view.js';
import type { Liveness } from './vocabulary.js';

/** Where {@link viewFromCache} gets what facts do not say. */
export interface ViewFromCacheOptions {
  /** Liveness source: a tracker or a function. */
  readonly liveness: LivenessTracker | ((nodeId: string) => Liveness);
  /** The clock, for a tracker (Unix ms). */
  readonly now_ms: number;
  /** Operator labels per node. */
  readonly labels?: (nodeId: string) => Readonly<Record<string, string>> | undefined;
  /** Outside load per node (0..1000). */
  readonly load?: (nodeId: string) => number | undefined;
}

/**
 * The engine's view of a facts cache: every held node with its operator tier, capped capabilities,
 * facts expiry (the engine refuses expired ones, and says so) and liveness.
 */
export function viewFromCache(cache: NodeFactsCache, options: ViewFromCacheOptions): PlacementView {
  const live = options.liveness;
  const nodes: NodeInput[] = [];
  for (const e of cache.entries()) {
    const labels = options.labels?.(e.node_id);
    const load = options.load?.(e.node_id);
    nodes.push({
      node_id: e.node_id,
      tier: e.tier,
      liveness: typeof live === 'function' ? live(e.node_id) : live.get(e.node_id, options.now_ms),
      capabilities: e.capabilities,
      expires_at_ms: e.expires_at_ms,
      ...(labels === undefined ? {} : { labels }),
      ...(load === undefined ? {} : { load_permille: Math.max(0, Math.min(1000, Math.round(load))) }),
    });
  }
  return PlacementView.create(nodes, { validate: false });
}
