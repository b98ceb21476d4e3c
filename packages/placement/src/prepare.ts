import type { PlacementRequest, RequestVariant, Selector } from './request.js';
import { executionRank, tierRank } from './vocabulary.js';

/** A request digested once for the engine (cached per request object; requests are not mutated). */
export interface PreparedRequest {
  /** Variants ordered by execution tier, listed order within a tier. */
  readonly variants: readonly RequestVariant[];
  /** Execution rank of each ordered variant. */
  readonly ranks: Int8Array;
  /** Each ordered variant needs an `accel.*` capability. */
  readonly needsAccel: readonly boolean[];
  /** Lowest acceptable tier rank. */
  readonly minTierRank: number;
  /** Memory, accelerator memory and CPU needed. */
  readonly memory_mb: number;
  readonly accel_memory_mb: number;
  readonly cpu_pct: number;
  /** Workloads that must not be co-resident. */
  readonly exclude: readonly string[];
  /** Affinity selectors. */
  readonly prefer: readonly Selector[];
  readonly avoid: readonly Selector[];
  /** Previous nodes (stickiness). */
  readonly previous: ReadonlySet<string>;
  /** Performance metric capability id. */
  readonly metric: string;
  /** FNV-1a hash of the workload name (sampling start). */
  readonly hash: number;
}

const cache = new WeakMap<PlacementRequest, PreparedRequest>();

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Digests `request` (memoised per object). */
export function prepareRequest(request: PlacementRequest): PreparedRequest {
  const hit = cache.get(request);
  if (hit !== undefined) return hit;
  const order = request.variants
    .map((v, i) => ({ v, i, r: executionRank(v.execution) }))
    .sort((a, b) => a.r - b.r || a.i - b.i);
  const variants = order.map((o) => o.v);
  const p: PreparedRequest = {
    variants,
    ranks: Int8Array.from(order.map((o) => o.r)),
    needsAccel: variants.map((v) =>
      v.requirements.some(
        (r) => (r.id ?? r.id_prefix ?? '') === 'accel' || (r.id ?? r.id_prefix ?? '').startsWith('accel.'),
      ),
    ),
    minTierRank: tierRank(request.min_tier ?? 'discovered'),
    memory_mb: request.resources?.memory_mb ?? 0,
    accel_memory_mb: request.resources?.accel_memory_mb ?? 0,
    cpu_pct: request.resources?.cpu_pct ?? 0,
    exclude: request.exclude_coresident ?? [],
    prefer: request.prefer ?? [],
    avoid: request.avoid ?? [],
    previous: new Set(request.previous_nodes ?? []),
    metric: request.perf_metric ?? 'perf.cpu',
    hash: fnv1a(request.workload),
  };
  cache.set(request, p);
  return p;
}
