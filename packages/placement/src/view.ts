import { NODE_TIERS, type NodeTier } from '@heddle/model';
import { z } from 'zod';
import { type Capability, CapabilityListSchema } from './capability.js';
import { PlacementError } from './errors.js';
import { parseOrThrow } from './parse.js';
import { deriveViewNode } from './view-node.js';
import { LIVENESS_VALUES, type Liveness } from './vocabulary.js';

/** One node as the engine's caller describes it. */
export interface NodeInput {
  /** Node id. */
  readonly node_id: string;
  /** Operator-assigned trust tier. */
  readonly tier: NodeTier;
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
  /** Cordoned by the operator: no new places go there (constraint `cordoned`). */
  readonly cordoned?: boolean;
}

/** A node inside a {@link PlacementView}: the input plus what the engine derives once per view. */
export interface ViewNode {
  /** Position in the view (nodes are sorted by id). */
  readonly index: number;
  /** Node id. */
  readonly node_id: string;
  /** Operator-assigned trust tier and its rank. */
  readonly tier: NodeTier;
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
  /** Cordoned by the operator (no new places). */
  readonly cordoned: boolean;
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
  tier: z.enum(NODE_TIERS),
  liveness: z.enum(LIVENESS_VALUES),
  capabilities: CapabilityListSchema,
  expires_at_ms: z.int().nonnegative().exactOptional(),
  labels: z.record(z.string().max(64), z.string().max(256)).exactOptional(),
  load_permille: z.int().min(0).max(1000).exactOptional(),
  cordoned: z.boolean().exactOptional(),
});

const EMPTY_INDEX = new Int32Array(0);

/** Per-decision scratch of the engine (typed arrays sized to the view). @internal */
export interface EngineScratch {
  /** Per-node stamp of the decision that evaluated it. */
  readonly stamp: Uint32Array;
  /** Per-node result of that evaluation. */
  readonly result: Int32Array;
  /** Candidate positions of the current decision. */
  readonly candidates: Int32Array;
  /** Decision counter. */
  epoch: number;
}

function newScratch(n: number): EngineScratch {
  return { stamp: new Uint32Array(n), result: new Int32Array(n), candidates: new Int32Array(n), epoch: 0 };
}

/**
 * What the engine places onto: an immutable snapshot of nodes sorted by id (so the order they were
 * given in never matters), indexed by capability id and by every dotted prefix of it. Build it once
 * per fleet change and reuse it across decisions. It also owns scratch buffers the engine reuses so a
 * decision allocates little. Re-entry is safe: a `place` on a view whose scratch is in use (say, from
 * a governance callback of another `place` on the same view) gets scratch of its own.
 */
export class PlacementView {
  /** Nodes sorted by id. */
  readonly nodes: readonly ViewNode[];
  /** Node position by id. */
  readonly byId: ReadonlyMap<string, number>;
  readonly #index: Map<string, Int32Array>;
  readonly #scratch: EngineScratch;
  #scratchBusy = false;
  #labels: Map<string, Map<string, Int32Array>> | undefined;
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
    this.#scratch = newScratch(nodes.length);
  }

  /** Engine scratch: per-node stamp of the decision that evaluated it. @internal */
  get stamp(): Uint32Array {
    return this.#scratch.stamp;
  }

  /** Engine scratch: per-node result of that evaluation. @internal */
  get result(): Int32Array {
    return this.#scratch.result;
  }

  /** Engine scratch: candidate positions of the current decision. @internal */
  get candidates(): Int32Array {
    return this.#scratch.candidates;
  }

  /** Engine scratch: decision counter. @internal */
  get epoch(): number {
    return this.#scratch.epoch;
  }

  set epoch(value: number) {
    this.#scratch.epoch = value;
  }

  /**
   * The engine takes the view's scratch for one decision, or, when it is already in use (a `place`
   * re-entered from a governance callback), fresh scratch that only that decision sees. Give it back
   * with {@link releaseScratch}. @internal
   */
  acquireScratch(): EngineScratch {
    if (this.#scratchBusy) return newScratch(this.nodes.length);
    this.#scratchBusy = true;
    return this.#scratch;
  }

  /** Returns scratch taken with {@link acquireScratch}. @internal */
  releaseScratch(scratch: EngineScratch): void {
    if (scratch === this.#scratch) this.#scratchBusy = false;
  }

  /**
   * Positions (ascending) of the nodes whose label `label` is `value` (an index built on first use of
   * that label). The returned array is shared: do not modify it.
   */
  withLabel(label: string, value: string): Int32Array {
    this.#labels ??= new Map();
    let byValue = this.#labels.get(label);
    if (byValue === undefined) {
      const lists = new Map<string, number[]>();
      for (const n of this.nodes) {
        if (!Object.hasOwn(n.labels, label)) continue;
        const v = n.labels[label]!;
        let list = lists.get(v);
        if (list === undefined) {
          list = [];
          lists.set(v, list);
        }
        list.push(n.index);
      }
      byValue = new Map([...lists].map(([k, v]) => [k, Int32Array.from(v)]));
      this.#labels.set(label, byValue);
    }
    return byValue.get(value) ?? EMPTY_INDEX;
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
    return new PlacementView(sorted.map(deriveViewNode));
  }

  /**
   * Engine memo of the request-static part of phase A for `request` (see `evaluateNodeMemo`), or null
   * the first time a key is seen (a one-off request allocates nothing). The engine keys it by the
   * request's content digest (its `PreparedRequest`), never by the caller's object, so mutating a
   * request cannot reach a stale memo. At most 32 keys are remembered, least recently used dropped.
   * @internal
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
    // cast: the map is not empty here, so its first key exists
    if (this.#memo.size >= 32) this.#memo.delete(this.#memo.keys().next().value as object);
    const memo = new Int32Array(this.nodes.length);
    this.#memo.set(request, memo);
    return memo;
  }

  /**
   * Replaces node `input.node_id` in place (a liveness, tier, expiry, attribute or label change of a
   * node already in the view), keeping the view's indexes, when its capability ids are those it had;
   * returns false, changing nothing, when the node is not in the view or its capability ids differ
   * (build a new view then). The input is not validated (as with `create({validate: false})`). A
   * decision taken after the call sees the new node; never call it from inside a decision.
   */
  replace(input: NodeInput): boolean {
    const i = this.byId.get(input.node_id);
    if (i === undefined) return false;
    const old = this.nodes[i]!;
    const caps = input.capabilities;
    if (caps.length !== old.caps.length) return false;
    for (let k = 0; k < caps.length; k++) if (caps[k]!.id !== old.caps[k]!.id) return false;
    const next = deriveViewNode(input, i);
    // cast: the nodes array is this view's own; only its readonly face is public
    (this.nodes as ViewNode[])[i] = next;
    if (this.#labels !== undefined && JSON.stringify(old.labels) !== JSON.stringify(next.labels))
      this.#labels = undefined;
    for (const memo of this.#memo.values()) memo[i] = 0;
    return true;
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
