import { tierRank } from '@heddle/model';
import type { PlacementRequest, RequestVariant, Selector } from './request.js';
import { executionRank } from './vocabulary.js';

/**
 * A request digested once for the engine. Cached by the request's content (its JSON text), never by
 * object identity, so a caller that mutates a request object and places it again gets a fresh digest.
 */
export interface PreparedRequest {
  /** A deep, frozen copy of the request this digest was made from (what the engine reads). */
  readonly request: PlacementRequest;
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
  /** Node labels required (label, value). */
  readonly labels: readonly { readonly label: string; readonly value: string }[];
  /** Performance metric capability id. */
  readonly metric: string;
  /** FNV-1a hash of the workload name (sampling start). */
  readonly hash: number;
}

/** Digests by request content, least recently used first (bounded). */
const cache = new Map<string, PreparedRequest>();
const CACHE_SIZE = 256;

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Digests `request`, memoised by its content: the key is its JSON text, so mutating a request object
 * between two calls can never return the digest of its old content. The digest holds a frozen deep
 * copy of the request (made from that text), so later mutations of the caller's object cannot reach it.
 */
export function prepareRequest(input: PlacementRequest): PreparedRequest {
  const key = JSON.stringify(input);
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  // cast: key is JSON.stringify of the typed input, so it parses back to a PlacementRequest
  const request = deepFreeze(JSON.parse(key) as PlacementRequest);
  const order = request.variants
    .map((v, i) => ({ v, i, r: executionRank(v.execution) }))
    .sort((a, b) => a.r - b.r || a.i - b.i);
  const variants = order.map((o) => o.v);
  const p: PreparedRequest = {
    request,
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
    labels: request.constraints ?? [],
    metric: request.perf_metric ?? 'perf.cpu',
    hash: fnv1a(request.workload),
  };
  // cast: the map is not empty here, so its first key exists
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(key, p);
  return p;
}
