import type {
  InstanceVerb,
  NodeBook,
  NodeDriver,
  OrderRecord,
  PlacementRecord,
  PlaceOrderInput,
  PlaceResult,
  PlaneContext,
  SettleOutcome,
  TargetRecord,
  UnsettledRecord,
} from '@heddle/control-plane/driver';
import type { JsonObject, JsonValue } from '@heddle/envelope';
import type { NodeInput } from '@heddle/placement';
import { placeStorePin } from './place-seed.js';
import { addSeedTarget, refreshSeedTarget, SEED_NODE_KIND } from './seed-book.js';
import { SEED_CAPABILITIES, SeedHosts } from './seed-nodes.js';
import { settleSeed } from './seed-settle.js';
import { seedVerb } from './seed-verbs.js';

/**
 * The driver of Cognitum Seed nodes (kind `seed`) for `@heddle/control-plane`: a Seed runs no Heddle
 * host, so the controller drives it through its HTTP API (TLS pinned to its certificate key, the
 * paired token read from its file on each use), with its own governed `WorkloadHost` over a
 * `SeedApiRuntime` per Seed (the controller's gate and chain) holding the pins of the orders placed
 * there. It:
 *
 * - adds a Seed (`ControlPlane.addNodeOf('seed', url, {tier, spki, tokenFile, allowPlainHttp?})`:
 *   its status, installed list and token checked) and asks it again on every refresh (a token the Seed
 *   refuses is not sent again until the file holds another);
 * - offers the engine what its adapter claims (`runtime.remote.api`, `node.class.cognitum-seed`);
 * - places the orders that carry a `store_pin` (the engine picks among the Seeds, each candidate
 *   gated for place, install, load and start, each attempt chained), and no packages;
 * - answers instance verbs through its WorkloadHost in the host protocol's shapes;
 * - settles a lost install answer from the Seed's installed list (see `settleSeed`);
 * - lists nothing (a lost instance on a Seed that answers again is asked its status) and takes no
 *   revocation list.
 *
 * One driver per control plane: it keeps each Seed's WorkloadHost in memory.
 */
export class SeedDriver implements NodeDriver {
  /** {@link SEED_NODE_KIND}. */
  readonly kind: string = SEED_NODE_KIND;
  readonly #hosts = new SeedHosts();

  /** Registers a Seed (see `addSeedTarget`). */
  add(ctx: PlaneContext, url: string, options: unknown): Promise<TargetRecord> {
    return addSeedTarget(ctx, url, options);
  }

  /** What its adapter claims (a Seed signs no facts). */
  viewNode(book: NodeBook, t: TargetRecord, now: number): NodeInput | undefined {
    if (t.tier === null) return undefined;
    return {
      node_id: t.node_id,
      tier: t.tier,
      liveness: book.liveness.get(t.node_id, now),
      capabilities: SEED_CAPABILITIES,
    };
  }

  /** Asks the Seed again (see `refreshSeedTarget`). */
  refresh(ctx: PlaneContext, t: TargetRecord): Promise<TargetRecord> {
    return refreshSeedTarget(ctx, t);
  }

  /** An instance verb through the Seed's WorkloadHost (see `seedVerb`). */
  verb(
    ctx: PlaneContext,
    t: TargetRecord,
    p: PlacementRecord,
    method: InstanceVerb,
    body: JsonObject,
  ): Promise<{ [key: string]: JsonValue }> {
    return seedVerb(ctx, this.#hosts, t, p, method, body);
  }

  /** The orders with a `store_pin`. */
  ownsOrder(order: PlaceOrderInput): boolean {
    return order.store_pin !== undefined;
  }

  /** Places a store pin (see `placeStorePin`). */
  placeOrder(ctx: PlaneContext, order: PlaceOrderInput, orderId: string | undefined): Promise<PlaceResult> {
    return placeStorePin(ctx, this.#hosts, order, orderId);
  }

  /** Settles a lost install answer from the Seed's installed list (see `settleSeed`). */
  settle(ctx: PlaneContext, u: UnsettledRecord, t: TargetRecord, order: OrderRecord): Promise<SettleOutcome> {
    return settleSeed(ctx, this.#hosts, u, t, order);
  }

  /** Drops the Seed's WorkloadHost (the node was removed). */
  forget(nodeId: string): void {
    this.#hosts.forget(nodeId);
  }
}

/** A new {@link SeedDriver}, to give `ControlPlaneOptions.drivers`. */
export function seedDriver(): SeedDriver {
  return new SeedDriver();
}
