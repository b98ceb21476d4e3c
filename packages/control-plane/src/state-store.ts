import type { SignedNodeFacts, TrustTier } from '@heddle/placement';

/** A host the controller knows (DESIGN 10): where it is, its key, and the tier the operator gave it. */
export interface TargetRecord {
  /** Node id (the id of `public_key`). */
  readonly node_id: string;
  /** Where its `workload-host` listens (`ws://` or `wss://`). */
  readonly url: string;
  /** The key trust is bound to (64 hex): learned on first use, or pinned by the operator. */
  readonly public_key: string;
  /** How the key was bound: `tofu` (first use) or `pinned` (the operator gave it). */
  readonly key_source: 'tofu' | 'pinned';
  /**
   * The operator-assigned tier, or null while the node has no tier (its address answered with another
   * key: it gets none until the operator pins the new key).
   */
  readonly tier: TrustTier | null;
  /** The tier the operator asked for (kept while `tier` is suspended). */
  readonly assigned_tier: TrustTier;
  /** Another key that answered at `url`, awaiting the operator's decision; null when none did. */
  readonly pending_key: string | null;
  /** The routes its advertisement lists (`native`, `wasi`, `container`). */
  readonly routes: readonly string[];
  /** The last signed facts it sent (verified against `public_key`), or null. */
  readonly facts: SignedNodeFacts | null;
  /** When the key was first bound (Unix ms). */
  readonly learned_at_ms: number;
  /** Last successful describe (Unix ms), or null. */
  readonly last_seen_ms: number | null;
  /** Since when it has been unreachable (Unix ms), or null while it answers. */
  readonly unreachable_since_ms: number | null;
  /** Why the last refresh failed, or null. */
  readonly last_error: string | null;
  /**
   * Set for a Cognitum Seed driven through its HTTP API (no Heddle host runs on it): its certificate
   * pin and token file. `public_key` then holds the SPKI pin, and `routes` is `["remote.api"]`.
   */
  readonly seed?: SeedTargetInfo | null;
}

/** How the controller reaches a Cognitum Seed. */
export interface SeedTargetInfo {
  /** SHA-256 (hex) of the Seed certificate's SubjectPublicKeyInfo: TLS is pinned to it. */
  readonly spki: string;
  /** The file holding the Seed's bearer token (mode 0600; the token itself is never stored here). */
  readonly token_file: string;
  /** Plain HTTP is allowed (the USB link or loopback only). */
  readonly allow_plain_http: boolean;
}

/** An operator's pin of a Seed store cog, as an order carries it. */
export interface OrderStorePin {
  readonly id: string;
  readonly version: string;
  readonly sha256?: string;
  /** Console commands the operator allows for it. */
  readonly console_commands: readonly string[];
}

/** What an operator asked to place: enough to place it again (a reschedule) without the operator. */
export interface OrderRecord {
  /** Order id (`o-` and 16 hex). */
  readonly order_id: string;
  /** The cog id. */
  readonly workload: string;
  readonly version: string;
  /** Manifest hash of the package, held in the controller's package store. */
  readonly manifest_hash: string;
  readonly package_id: string;
  /** Run mode, as on the wire (`{"type":"once"}`, ...). */
  readonly mode:
    | { readonly type: 'once' | 'listener' }
    | { readonly type: 'interval'; readonly secs: number };
  /** Config values. */
  readonly values: Readonly<Record<string, string | number | boolean | null>>;
  /** Start after placing. */
  readonly start: boolean;
  /** Pinned to this node, or null. */
  readonly node: string | null;
  /** Node ids to prefer and to avoid. */
  readonly prefer: readonly string[];
  readonly avoid: readonly string[];
  /** Whether emulated variants may be chosen. */
  readonly allow_emulated: boolean;
  readonly created_at_ms: number;
  /** Set for an order of a Seed store cog (then `manifest_hash` is empty). */
  readonly store_pin?: OrderStorePin | null;
}

/** Where a placement stands, as the controller knows it. */
export type PlacementState = 'placed' | 'running' | 'stopped' | 'unloaded' | 'failed' | 'lost';

/** One placed instance, as the controller knows it. */
export interface PlacementRecord {
  /** The instance id on its node. */
  readonly instance_id: string;
  readonly node_id: string;
  readonly order_id: string;
  /** The chain hash of the controller's decision that placed it. */
  readonly decision_id: string;
  readonly workload: string;
  readonly version: string;
  readonly variant: string;
  readonly runtime: string;
  readonly manifest_hash: string;
  /** What a revocation names: the package id, its signer keys and artifact hashes. */
  readonly package_id: string;
  readonly signer_keys: readonly string[];
  readonly artifact_hashes: readonly string[];
  readonly state: PlacementState;
  /** The operator wants it running (set by start, cleared by stop). */
  readonly desired_running: boolean;
  readonly placed_at_ms: number;
  readonly updated_at_ms: number;
}

/** A place whose answer was lost and could not yet be reconciled with its node (DESIGN 4). */
export interface UnsettledRecord {
  /** The decision id the place carried. */
  readonly decision_id: string;
  readonly order_id: string;
  /** The node the place was sent to (never tried elsewhere before this is settled). */
  readonly node_id: string;
  /** The instance id the node will derive, when the controller could compute it; else null. */
  readonly expected_instance_id: string | null;
  readonly variant: string;
  readonly since_ms: number;
  /** Reconciliation attempts so far. */
  readonly attempts: number;
  /** Why the last attempt could not settle it. */
  readonly last_error: string;
}

/**
 * Where the controller keeps its state (DESIGN 10): targets, orders, placements and unsettled
 * decisions. Every write is durable when it returns; {@link StateStore.transaction} groups writes
 * atomically (all or none). Implementations: `SqliteStateStore` (the default, an embedded SQLite
 * database); a server database can take its place behind this interface. Calls are synchronous.
 */
export interface StateStore {
  /** Runs `fn` in one transaction: every write inside lands, or none does (when `fn` throws). */
  transaction<T>(fn: () => T): T;

  getTarget(nodeId: string): TargetRecord | undefined;
  listTargets(): TargetRecord[];
  putTarget(target: TargetRecord): void;
  /** Removes a target; false when it was not there. */
  removeTarget(nodeId: string): boolean;

  getOrder(orderId: string): OrderRecord | undefined;
  listOrders(): OrderRecord[];
  putOrder(order: OrderRecord): void;
  removeOrder(orderId: string): boolean;

  getPlacement(instanceId: string): PlacementRecord | undefined;
  /** Placements, optionally only those on `nodeId`, ordered by `placed_at_ms`. */
  listPlacements(nodeId?: string): PlacementRecord[];
  putPlacement(placement: PlacementRecord): void;
  removePlacement(instanceId: string): boolean;

  getUnsettled(decisionId: string): UnsettledRecord | undefined;
  listUnsettled(): UnsettledRecord[];
  putUnsettled(record: UnsettledRecord): void;
  removeUnsettled(decisionId: string): boolean;

  /** The schema version the store is at. */
  readonly schemaVersion: number;
  /** Closes the store; later calls throw `StateError` `closed`. */
  close(): void;
}
