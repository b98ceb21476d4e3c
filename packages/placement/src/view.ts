import { z } from 'zod';
import { type Capability, CapabilityListSchema } from './capability.js';
import { PlacementError } from './errors.js';
import type { NodeFactsCache } from './facts-cache.js';
import type { LivenessTracker } from './liveness.js';
import { parseOrThrow } from './parse.js';
import { LIVENESS_VALUES, type Liveness, TRUST_TIERS, type TrustTier, tierRank } from './vocabulary.js';

/** One node as the engine's caller describes it. */
export interface NodeInput {
  /** Node id. */
  readonly node_id: string;
  /** Operator-assigned trust tier. */
  readonly tier: TrustTier;
  /** Liveness at the time of the view. */
  readonly liveness: Liveness;
  /** Capabilities (from verified facts). */
  readonly capabilities: readonly Capability[];
  /** When its facts expire (Unix ms); absent means they do not. */
  readonly expires_at_ms?: number;
  /** Operator labels (`zone: "lab"`), used by affinity and spread. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Load observed outside Heddle's reservations, 0..1000 (per mille). */
  readonly load_permille?: number;
}

/** A node inside a {@link PlacementView}: the input plus what the engine derives once per view. */
export interface ViewNode {
  /** Position in the view (nodes are sorted by id). */
  readonly index: number;
  /** Node id. */
  readonly node_id: string;
  /** Operator-assigned trust tier and its rank. */
  readonly tier: TrustTier;
  /** Rank of `tier` (discovered 0, paired 1, pinned 2). */
  readonly tierRank: number;
  /** Liveness. */
  readonly liveness: Liveness;
  /** Capabilities. */
  readonly caps: readonly Capability[];
  /** Capabilities by id. */
  readonly capById: ReadonlyMap<string, Capability>;
  /** Facts expiry (Unix ms; `Infinity` when none). */
  readonly expires_at_ms: number;
  /** Operator labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** Outside load, 0..1000. */
  readonly load_permille: number;
  /** `mem.system` `size_mb`, or -1 when the node reports none. */
  readonly memory_mb: number;
  /** The node has `mem.unified` (accelerators share system memory). */
  readonly unified: boolean;
  /** Sum of `memory_mb` of its `accel.*` capabilities. */
  readonly accel_memory_mb: number;
  /** The node has any `accel.*` capability. */
  readonly has_accel: boolean;
  /** CPU capacity in percent of one core: 100 x `cores` of its `cpu.arch.*` capability (default 1). */
  readonly cpu_capacity: number;
}

/** Schema of a {@link NodeInput}. */
export const NodeInputSchema: z.ZodType<NodeInput> = z.strictObject({
  node_id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[0-9a-z][0-9a-z._-]*$/, 'expected a node id'),
  tier: z.enum(TRUST_TIERS),
  liveness: z.enum(LIVENESS_VALUES),
  capabilities: CapabilityListSchema,
  expires_at_ms: z.int().nonnegative().optional(),
  labels: z.record(z.string().max(64), z.string().max(256)).optional(),
  load_permille: z.int().min(0).max(1000).optional(),
});

const EMPTY_LABELS: Readonly<Record<string, string>> = Object.freeze({});
const EMPTY_INDEX = new Int32Array(0);

function attrInt(cap: Capability | undefined, attr: string): number | undefined {
  const v = cap?.attrs[attr];
  return typeof v === 'number' ? v : undefined;
}

function derive(input: NodeInput, index: number): ViewNode {
  const capById = new Map<string, Capability>();
  let accelMem = 0;
  let hasAccel = false;
  let cores = 1;
  for (const c of input.capabilities) {
    capById.set(c.id, c);
    if (c.id.startsWith('accel.')) {
      hasAccel = true;
      accelMem += attrInt(c, 'memory_mb') ?? 0;
    }
    if (c.id.startsWith('cpu.arch.')) cores = Math.max(cores, attrInt(c, 'cores') ?? 1);
  }
  return {
    index,
    node_id: input.node_id,
    tier: input.tier,
    tierRank: tierRank(input.tier),
    liveness: input.liveness,
    caps: input.capabilities,
    capById,
    expires_at_ms: input.expires_at_ms ?? Number.POSITIVE_INFINITY,
    labels: input.labels ?? EMPTY_LABELS,
    load_permille: input.load_permille ?? 0,
    memory_mb: attrInt(capById.get('mem.system'), 'size_mb') ?? -1,
    unified: capById.has('mem.unified'),
    accel_memory_mb: accelMem,
    has_accel: hasAccel,
    cpu_capacity: 100 * cores,
  };
}

/**
 * What the engine places onto: an immutable snapshot of nodes sorted by id (so the order they were
 * given in never matters), indexed by capability id and by every dotted prefix of it. Build it once
 * per fleet change and reuse it across decisions. It also owns scratch buffers the engine reuses so a
 * decision allocates little; a view must therefore not be used by two `place` calls at once (a single
 * JavaScript thread never does).
 */
export class PlacementView {
  /** Nodes sorted by id. */
  readonly nodes: readonly ViewNode[];
  /** Node position by id. */
  readonly byId: ReadonlyMap<string, number>;
  readonly #index: Map<string, Int32Array>;
  /** Engine scratch: per-node stamp of the decision that evaluated it. @internal */
  readonly stamp: Uint32Array;
  /** Engine scratch: per-node result of that evaluation. @internal */
  readonly result: Int32Array;
  /** Engine scratch: candidate positions of the current decision. @internal */
  readonly candidates: Int32Array;
  /** Engine scratch: decision counter. @internal */
  epoch: number;
  readonly #memo = new Map<object, Int32Array>();
  readonly #seen = new WeakSet<object>();

  private constructor(nodes: ViewNode[]) {
    this.nodes = nodes;
    const byId = new Map<string, number>();
    const lists = new Map<string, number[]>();
    for (const n of nodes) {
      byId.set(n.node_id, n.index);
      for (const c of n.caps) {
        let key = c.id;
        for (;;) {
          let list = lists.get(key);
          if (list === undefined) {
            list = [];
            lists.set(key, list);
          }
          if (list[list.length - 1] !== n.index) list.push(n.index);
          const dot = key.lastIndexOf('.');
          if (dot < 0) break;
          key = key.slice(0, dot);
        }
      }
    }
    this.byId = byId;
    this.#index = new Map([...lists].map(([k, v]) => [k, Int32Array.from(v)]));
    this.stamp = new Uint32Array(nodes.length);
    this.result = new Int32Array(nodes.length);
    this.candidates = new Int32Array(nodes.length);
    this.epoch = 0;
  }

  /**
   * Builds a view from node descriptions. With `validate` (the default) each node is checked against
   * {@link NodeInputSchema} and junk is refused with `invalid_view` naming the field
   * (`nodes[3].capabilities[0].id`); duplicate node ids are refused with `duplicate_node`.
   */
  static create(nodes: readonly NodeInput[], options: { validate?: boolean } = {}): PlacementView {
    if (!Array.isArray(nodes))
      throw new PlacementError('invalid_view', 'invalid view: nodes: expected an array', { field: 'nodes' });
    const checked =
      options.validate === false
        ? nodes
        : nodes.map((n, i) => parseOrThrow(NodeInputSchema, n, 'invalid_view', 'view', `nodes[${i}]`));
    const sorted = [...checked].sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0));
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.node_id === sorted[i - 1]!.node_id) {
        throw new PlacementError('duplicate_node', `node ${sorted[i]!.node_id} appears twice in the view`, {
          field: 'node_id',
        });
      }
    }
    return new PlacementView(sorted.map(derive));
  }

  /**
   * Engine memo of the request-static part of phase A for `request` (see `evaluateNodeMemo`), or null
   * the first time a request object is seen (a one-off request allocates nothing). At most 32 requests
   * are remembered, least recently used dropped. Requests must not be mutated after use. @internal
   */
  memoFor(request: object): Int32Array | null {
    const hit = this.#memo.get(request);
    if (hit !== undefined) {
      this.#memo.delete(request);
      this.#memo.set(request, hit);
      return hit;
    }
    if (!this.#seen.has(request)) {
      this.#seen.add(request);
      return null;
    }
    if (this.#memo.size >= 32) this.#memo.delete(this.#memo.keys().next().value as object);
    const memo = new Int32Array(this.nodes.length);
    this.#memo.set(request, memo);
    return memo;
  }

  /** Number of nodes. */
  get size(): number {
    return this.nodes.length;
  }

  /** Node by id. */
  get(nodeId: string): ViewNode | undefined {
    const i = this.byId.get(nodeId);
    return i === undefined ? undefined : this.nodes[i];
  }

  /**
   * Positions (ascending) of the nodes with a capability whose id is `idOrPrefix` or starts with it on
   * a segment boundary. The returned array is shared: do not modify it.
   */
  withCapability(idOrPrefix: string): Int32Array {
    return this.#index.get(idOrPrefix) ?? EMPTY_INDEX;
  }

  /** Number of distinct index keys (ids and prefixes). */
  get indexKeys(): number {
    return this.#index.size;
  }
}

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
