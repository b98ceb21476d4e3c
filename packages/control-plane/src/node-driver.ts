import type { JsonObject, JsonValue } from '@heddle/envelope';
import type { CogBody, RevocationList, VerifiedWorkload } from '@heddle/package';
import type { NodeInput } from '@heddle/placement';
import type { HostListing } from './host-listing.js';
import type { NodeBook } from './node-book.js';
import type { PlaceOrderInput } from './order.js';
import type { PlaceHooks, PlaceResult } from './place.js';
import type { Attempt, AttemptExtras } from './place-attempt.js';
import type { PlaneContext } from './plane-context.js';
import type { RevocationNodeResult } from './revocation-push.js';
import type { OrderRecord, PlacementRecord, TargetRecord, UnsettledRecord } from './state-store.js';

/** The kind of a node the plane reaches over the signed wire protocol (a `heddle-host`). */
export const HOST_NODE_KIND = 'host';

/** The instance verbs the plane sends to a node's driver. */
export type InstanceVerb =
  | 'workload.start'
  | 'workload.stop'
  | 'workload.unload'
  | 'workload.status'
  | 'workload.logs';

/** One package placement on one node, as the package flow asks a driver (see `placeOrder`). */
export interface PackageAttempt {
  /** The package, verified against the controller's anchors and held in its package store. */
  readonly verified: VerifiedWorkload<CogBody>;
  readonly order: OrderRecord;
  /** The chained decision (its hash). */
  readonly decisionId: string;
  readonly nodeId: string;
  /** The variant the engine chose for this node. */
  readonly variant: string;
  /** The engine chose the emulated alternative of the variant. */
  readonly emulated: boolean;
  readonly hooks: PlaceHooks;
  readonly extras: AttemptExtras;
}

/**
 * What settling one unsettled decision with its node did: `placed` (recorded now), `nothing` (the
 * node never acted on it: dropped), `pending` (still unsettled, its attempts counted), `gone` (settled
 * meanwhile by someone else: nothing to report).
 */
export type SettleOutcome = 'placed' | 'nothing' | 'pending' | 'gone';

/**
 * A kind of node, as the control plane drives it. The plane keeps the records (targets, orders,
 * placements, unsettled decisions), the engine, the gate and the chain; a driver is what differs per
 * kind of node: how the node is registered and asked again, what it offers the engine, how a place,
 * an instance verb and a lost answer's settling reach it, and whether it lists its instances or takes
 * a revocation list. Every target carries its `kind` (absent: {@link HOST_NODE_KIND}) and every call
 * about it goes to the driver registered for that kind.
 *
 * The host driver (`hostDriver`, the signed wire protocol) is built in; others are given in
 * `ControlPlaneOptions.drivers` (the Cognitum Seed's is in `@heddle/seed-adapter/controller`).
 * A driver's methods get the plane's context, and throw `PlaneError`s.
 */
export interface NodeDriver {
  /** The kind it drives (`[a-z][a-z0-9-]{0,31}`), as recorded in `TargetRecord.kind`. */
  readonly kind: string;

  /**
   * Registers a node of this kind at `url`: `options` is the caller's (untrusted: parse it and refuse
   * with `invalid_input` naming the field), the node is checked, and its target (with `kind` set to
   * this driver's) is stored and returned. Absent: nodes of this kind are added otherwise.
   */
  add?(ctx: PlaneContext, url: string, options: unknown): Promise<TargetRecord>;

  /**
   * What node `t` offers the engine now (its capabilities, tier and liveness from `book.liveness`), or
   * undefined when it offers nothing yet (no facts held). Only called for targets with a tier.
   */
  viewNode(book: NodeBook, t: TargetRecord, now: number): NodeInput | undefined;

  /**
   * Asks node `t` again (a health check, bounded on its own): the updated target is stored and
   * returned, and its contact or failure recorded in `ctx.book.liveness`. Never throws for a node that
   * cannot be reached: that is recorded as unreachable, with the reason.
   */
  refresh(ctx: PlaneContext, t: TargetRecord): Promise<TargetRecord>;

  /**
   * Sends an instance verb about placement `p` on node `t` and returns the answer in the host
   * protocol's shape (`status`: `{instance}`, `logs`: `{lines, truncated}`, `stop`: `{evidence,
   * status}`). `decisionId` is the chained controller decision of a mutation (undefined for `status`
   * and `logs`).
   */
  verb(
    ctx: PlaneContext,
    t: TargetRecord,
    p: PlacementRecord,
    method: InstanceVerb,
    body: JsonObject,
    decisionId: string | undefined,
  ): Promise<{ [key: string]: JsonValue }>;

  /**
   * Places a verified package on one node of this kind (the package flow's attempt): gate checks,
   * the place itself, a lost answer reconciled or kept unsettled, the outcome chained. Absent: the
   * kind takes no packages (the engine never picks it for one, since it offers no route for them).
   */
  placePackage?(ctx: PlaneContext, a: PackageAttempt): Promise<Attempt>;

  /** Whether this driver places `order` itself (an order only its nodes can run). */
  ownsOrder?(order: PlaceOrderInput): boolean;

  /** Places an order it owns (see {@link ownsOrder}) from decision to placement, under `orderId`. */
  placeOrder?(ctx: PlaneContext, order: PlaceOrderInput, orderId: string | undefined): Promise<PlaceResult>;

  /**
   * Settles an unsettled decision `u` (a place whose answer was lost) of `order` with node `t`,
   * within about `timeoutMs`: records the placement, drops the decision, or keeps it (see
   * {@link SettleOutcome}). Chains what it settles.
   */
  settle(
    ctx: PlaneContext,
    u: UnsettledRecord,
    t: TargetRecord,
    order: OrderRecord,
    timeoutMs: number,
  ): Promise<SettleOutcome>;

  /**
   * Node `t`'s listing of its instances (and those it took down), for the lifecycle tick's
   * reconciliation. Absent: the kind lists nothing, and each placement lost on such a node that
   * answers again is asked its `workload.status` instead (and adopted back when it is still there).
   */
  listInstances?(ctx: PlaneContext, t: TargetRecord): Promise<HostListing>;

  /**
   * Pushes the controller's revocation list to node `t` (which acknowledged generation `acked`) and
   * records its acknowledgement. Absent: the kind takes no revocation list (skipped).
   */
  pushRevocations?(
    ctx: PlaneContext,
    t: TargetRecord,
    list: RevocationList,
    acked: number,
  ): Promise<RevocationNodeResult>;

  /** Forgets what it keeps in memory about node `nodeId` (the node was removed). */
  forget?(nodeId: string): void;
}
