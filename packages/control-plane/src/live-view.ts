import { growVerifyKeyCache } from '@heddle/envelope';
import { type NodeInput, PlacementView, type ViewNode } from '@heddle/placement';
import { withMeta } from './engine-view.js';
import type { PlaneContext } from './plane-context.js';

/**
 * Keys the verification cache holds beyond the nodes of the view (the controller's operators, nodes
 * without a tier, replaced keys).
 */
const KEY_CACHE_SLACK = 64;

/** What the live view reads: the targets, the book (liveness, facts) and each kind's driver. */
export type LiveViewSource = Pick<PlaneContext, 'book' | 'store' | 'drivers'>;

/** Counters of a {@link LiveEngineView}, for tests and benchmarks. */
export interface LiveViewStats {
  /** Nodes whose input was computed again (one per node event, or every node on a full load). */
  readonly recomputed: number;
  /** Views built from scratch (the node set or a node's capability ids changed). */
  readonly rebuilt: number;
  /** Nodes replaced in place in the current view (liveness, tier, expiry or attributes changed). */
  readonly patched: number;
  /** Full loads from the store (the first view, or a store that cannot report its target writes). */
  readonly loads: number;
}

/**
 * The engine's view kept in memory and brought up to date from node events instead of being rebuilt
 * from the store for every place (docs/placement.md, "The controller's view"). Each node's input
 * (what its kind's driver presents: `NodeDriver.viewNode`) is computed again only when the node
 * changed: a target or its operator record (labels, cordon) written or removed in the store (join,
 * describe, tier, key, label, cordon; the store reports each write through `StateStore.watchTargets`), a liveness change (`CheckedLiveness.watch`), or a
 * liveness change that time alone brings (a failing node turns dead `dead_after` after its first
 * failure: the view keeps the time of the next such change). A changed node is replaced in place
 * when its capability ids are unchanged; a node joining or leaving, or new capability ids, rebuild
 * the view once, at the next place. A store without `watchTargets` is read in full for every view,
 * as before. The Ed25519 verification key cache (`growVerifyKeyCache`) is grown to hold a key per
 * node of the view, so that verifying answers across the fleet never rebuilds a key. Instances placed, stopped and moved are not part of the view: they are reservations
 * (`Reservations`), which the engine reads beside it.
 */
export class LiveEngineView {
  readonly #src: LiveViewSource;
  readonly #inputs = new Map<string, NodeInput>();
  /** Serialised capabilities (with attributes) and labels of each input, to tell a real change. */
  readonly #shape = new Map<string, string>();
  readonly #dirty = new Set<string>();
  /** Nodes whose liveness changes with time alone, and when. */
  readonly #timed = new Map<string, number>();
  readonly #watching: boolean;
  #loaded = false;
  #nextAt = Number.POSITIVE_INFINITY;
  #view: PlacementView | undefined;
  #stats = { recomputed: 0, rebuilt: 0, patched: 0, loads: 0 };

  constructor(src: LiveViewSource) {
    this.#src = src;
    this.#watching = src.store.watchTargets !== undefined;
    src.store.watchTargets?.((nodeId) => this.touch(nodeId));
    src.book.liveness.watch((nodeId) => this.touch(nodeId));
  }

  /** Node `nodeId` changed: its input is computed again before the next view is given out. */
  touch(nodeId: string): void {
    if (this.#loaded) this.#dirty.add(nodeId);
  }

  /** Forgets everything: the next view is loaded from the store in full. */
  reload(): void {
    this.#loaded = false;
  }

  /** The view at `now` (shared: valid until the next node event; the engine only reads it). */
  view(now: number): PlacementView {
    this.#catchUp(now);
    if (this.#view === undefined) {
      this.#view = PlacementView.create([...this.#inputs.values()], { validate: false });
      this.#stats.rebuilt++;
    }
    return this.#view;
  }

  /** The view at `now` without the nodes in `exclude` (a view of its own when any is left out). */
  viewExcluding(now: number, exclude: ReadonlyMap<string, string>): PlacementView {
    if (exclude.size === 0) return this.view(now);
    this.#catchUp(now);
    const nodes: NodeInput[] = [];
    for (const n of this.#inputs.values()) if (!exclude.has(n.node_id)) nodes.push(n);
    return PlacementView.create(nodes, { validate: false });
  }

  /** One node as the engine sees it at `now`, or undefined when it offers nothing. */
  node(nodeId: string, now: number): ViewNode | undefined {
    return this.view(now).get(nodeId);
  }

  /** The input of node `nodeId` at `now` (as its driver presented it), or undefined. */
  input(nodeId: string, now: number): NodeInput | undefined {
    this.#catchUp(now);
    return this.#inputs.get(nodeId);
  }

  /** Counters since this view was made. */
  get stats(): LiveViewStats {
    return { ...this.#stats };
  }

  #catchUp(now: number): void {
    if (!this.#loaded || !this.#watching) {
      this.#load(now);
      return;
    }
    if (now >= this.#nextAt) for (const [id, at] of this.#timed) if (at <= now) this.#dirty.add(id);
    if (this.#dirty.size === 0) return;
    for (const id of this.#dirty) this.#recompute(id, now);
    this.#dirty.clear();
    this.#nextAt = Number.POSITIVE_INFINITY;
    for (const at of this.#timed.values()) if (at < this.#nextAt) this.#nextAt = at;
  }

  #load(now: number): void {
    this.#inputs.clear();
    this.#shape.clear();
    this.#timed.clear();
    this.#dirty.clear();
    this.#nextAt = Number.POSITIVE_INFINITY;
    const { store, drivers, book } = this.#src;
    const meta = new Map(store.listNodeMeta().map((m) => [m.node_id, m]));
    for (const t of store.listTargets()) {
      this.#time(t.node_id, now);
      if (t.tier === null) continue;
      const offered = drivers.find(t)?.viewNode(book, t, now);
      if (offered === undefined) continue;
      const input = withMeta(offered, meta.get(t.node_id));
      this.#inputs.set(t.node_id, input);
      this.#shape.set(t.node_id, shapeOf(input));
    }
    this.#view = undefined;
    this.#loaded = true;
    this.#stats.loads++;
    growVerifyKeyCache(this.#inputs.size + KEY_CACHE_SLACK);
  }

  #time(nodeId: string, now: number): void {
    const at = this.#src.book.liveness.changesAt(nodeId, now);
    if (at === undefined) this.#timed.delete(nodeId);
    else {
      this.#timed.set(nodeId, at);
      if (at < this.#nextAt) this.#nextAt = at;
    }
  }

  #recompute(nodeId: string, now: number): void {
    this.#stats.recomputed++;
    const { store, drivers, book } = this.#src;
    const t = store.getTarget(nodeId);
    this.#time(nodeId, now);
    const offered = t === undefined || t.tier === null ? undefined : drivers.find(t)?.viewNode(book, t, now);
    const input = offered === undefined ? undefined : withMeta(offered, store.getNodeMeta(nodeId));
    const old = this.#inputs.get(nodeId);
    if (input === undefined) {
      if (old === undefined) return;
      this.#inputs.delete(nodeId);
      this.#shape.delete(nodeId);
      this.#view = undefined;
      return;
    }
    const shape = shapeOf(input);
    const same = old !== undefined && this.#shape.get(nodeId) === shape;
    if (old === undefined) growVerifyKeyCache(this.#inputs.size + 1 + KEY_CACHE_SLACK);
    this.#inputs.set(nodeId, input);
    this.#shape.set(nodeId, shape);
    if (
      same &&
      old.tier === input.tier &&
      old.liveness === input.liveness &&
      old.cordoned === input.cordoned &&
      old.expires_at_ms === input.expires_at_ms &&
      old.load_permille === input.load_permille
    )
      return;
    if (this.#view === undefined) return;
    if (old !== undefined && this.#view.replace(input)) this.#stats.patched++;
    else this.#view = undefined;
  }
}

/** The capabilities (ids and attributes) and labels of `n`, as one string. */
function shapeOf(n: NodeInput): string {
  return JSON.stringify([n.capabilities, n.labels ?? null]);
}
