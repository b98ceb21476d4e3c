import type { LifecycleState, NodeTier } from '@heddle/model';
import type { RevocationListFile } from '@heddle/package';
import type { SignedNodeFacts } from '@heddle/placement';
import type { JobSpec } from './job-file.js';

/** A host the controller knows (docs/lifecycle.md): where it is, its key, and the tier the operator gave it. */
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
  readonly tier: NodeTier | null;
  /** The tier the operator asked for (kept while `tier` is suspended). */
  readonly assigned_tier: NodeTier;
  /** Another key that answered at `url`, awaiting the operator's decision; null when none did. */
  readonly pending_key: string | null;
  /** The routes its advertisement lists (`native`, `wasi`, `container`). */
  readonly routes: readonly string[];
  /**
   * The software its last describe reported (`heddle-host` `0.1.0`), or null/absent when it reported
   * none (an older host, a Seed). Shown to operators; never used to decide anything.
   */
  readonly software?: HostSoftwareRecord | null | undefined;
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
   * The kind of node, which names the driver that reaches it (see `NodeDriver`); absent for a
   * `heddle-host` reached over the signed wire protocol (kind `host`).
   */
  readonly kind?: string | undefined;
  /**
   * Set for a Cognitum Seed driven through its HTTP API (no Heddle host runs on it): its certificate
   * pin and token file. `public_key` then holds the SPKI pin, and `routes` is `["remote.api"]`.
   */
  readonly seed?: SeedTargetInfo | null | undefined;
  /**
   * The controller lease its host advertises (ms: it stops the continuous instances controllers placed
   * when no controller was heard from for this long), or null/absent when it has none.
   */
  readonly lease_ms?: number | null | undefined;
}

/** A program and version a host reports in `describe`. */
export interface HostSoftwareRecord {
  readonly name: string;
  readonly version: string;
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
  readonly sha256?: string | undefined;
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
  /**
   * Whether a lost instance may be placed again on another node (default true). False for a workload
   * tied to its node (a sensor or a device there): its node's death raises an alert instead.
   */
  readonly migratable: boolean;
  readonly created_at_ms: number;
  /** Set for an order of a Seed store cog (then `manifest_hash` is empty). */
  readonly store_pin?: OrderStorePin | null | undefined;
  /** Node labels a node must carry to take it (`label.room=kitchen`); absent or empty: none (schema v7). */
  readonly constraints?: readonly LabelConstraint[] | undefined;
  /** Spread its instances over the values of this node label (schema v7). */
  readonly spread?: string | null | undefined;
  /**
   * What a placement of it records about its package (schema v9): so that a controller that does not
   * hold the package (another controller sharing the state placed it) can still record an instance
   * its settling pass finds. Absent in orders written before, and for store-pinned orders.
   */
  readonly package_facts?: OrderPackageFacts | undefined;
}

/** The package facts an order carries (see {@link OrderRecord.package_facts}). */
export interface OrderPackageFacts {
  /** The keys that signed the package (hex). */
  readonly signer_keys: readonly string[];
  /** The BLAKE3 hashes of its artifacts. */
  readonly artifact_hashes: readonly string[];
  /** The resources a placement of it reserves on its node. */
  readonly ram_mb: number;
  readonly cpu_pct: number;
}

/** A placement constraint on a node label: the node must carry `label` with exactly `value`. */
export interface LabelConstraint {
  readonly label: string;
  readonly value: string;
}

/** What the operator set on a node (schema v7): cordoned (no new places) and its labels. */
export interface NodeMetaRecord {
  readonly node_id: string;
  /** No new places go there (the engine skips it, naming why). */
  readonly cordoned: boolean;
  /** Operator labels (`room: kitchen`), used by constraints and spread. */
  readonly labels: Readonly<Record<string, string>>;
  readonly updated_at_ms: number;
}

/**
 * Where a placement stands, as the controller knows it: the lifecycle states of `@heddle/model` the
 * controller uses (docs/lifecycle.md). Every change is checked with `canTransition` and chained
 * (`workload.lifecycle`, see `placement-life.ts`).
 */
export type PlacementState = Extract<
  LifecycleState,
  | 'placed'
  | 'loaded'
  | 'running'
  | 'unhealthy'
  | 'restarting'
  | 'stopped'
  | 'finished'
  | 'failed'
  | 'lost'
  | 'rescheduled'
  | 'revoked'
  | 'unloaded'
>;

/** Every {@link PlacementState}. */
export const PLACEMENT_STATES: readonly PlacementState[] = Object.freeze([
  'placed',
  'loaded',
  'running',
  'unhealthy',
  'restarting',
  'stopped',
  'finished',
  'failed',
  'lost',
  'rescheduled',
  'revoked',
  'unloaded',
] as const);

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
  /** The instance this one replaced (a reschedule), or null/absent for an original placement. */
  readonly replaces?: string | null;
  /** How many reschedules led to this instance in its lineage (0 or absent for an original). */
  readonly reschedules?: number;
  /**
   * The resources it holds on its node while live (its package's `ram_mb` and `cpu_pct`; schema v10):
   * what the shared capacity check of every controller counts. Absent in records of a Seed store pin,
   * and in records written before v10 whose order carried no package facts (until a controller holding
   * the package opens the state).
   */
  readonly ram_mb?: number | undefined;
  readonly cpu_pct?: number | undefined;
}

/**
 * A lost instance waiting to be placed again (docs/lifecycle.md): persisted so that a controller restart
 * continues it.
 */
export interface RescheduleRecord {
  /** The lost instance to replace. */
  readonly instance_id: string;
  readonly order_id: string;
  /** The node it was lost on. */
  readonly node_id: string;
  /** Nodes to avoid (dead ones). */
  readonly avoid: readonly string[];
  /** The reschedule count the replacement will carry (1 for the first replacement of a lineage). */
  readonly reschedules: number;
  /** Attempts that found no node so far (the backoff doubles with each). */
  readonly attempts: number;
  /** When the next attempt is due (Unix ms). */
  readonly next_at_ms: number;
  readonly since_ms: number;
  /** The decision of an attempt whose answer was lost (kept unsettled), or null. */
  readonly decision_id: string | null;
  readonly last_error: string | null;
}

/** Why an alert was raised. */
export type AlertReason = 'pinned' | 'not_migratable' | 'reschedule_limit' | 'no_order' | 'clock_skew';

/**
 * Something the operator must look at (docs/lifecycle.md): raised once per (instance, reason). A
 * `clock_skew` alert is about a node, not an instance (`instance_id` and `order_id` are `""`): one is
 * raised per episode and closed (`acked_at_ms` set) by the controller once the node's clock is back.
 */
export interface AlertRecord {
  /** `al-` and 16 hex, derived from the instance and the reason (for `clock_skew`, the node and the time). */
  readonly alert_id: string;
  /** The instance, or `""` for an alert about a node (`clock_skew`). */
  readonly instance_id: string;
  readonly node_id: string;
  readonly order_id: string;
  readonly reason: AlertReason;
  /** For people. */
  readonly detail: string;
  readonly raised_at_ms: number;
  /** When the operator acknowledged it, or null. */
  readonly acked_at_ms: number | null;
}

/** The revocation list generation a node acknowledged (its answer to `workload.revoke`). */
export interface RevocationAckRecord {
  readonly node_id: string;
  /** The highest generation the node said it holds (0: none acknowledged yet). */
  readonly generation: number;
  /** When it last answered, or null. */
  readonly acked_at_ms: number | null;
  /** Why the last push failed, or null. */
  readonly last_error: string | null;
}

/** The signed revocation list the controller distributes (one row, `name` = `current`). */
export interface HeldRevocationList {
  readonly name: string;
  readonly generation: number;
  /** The signed `heddle.revocation-list.v1` document. */
  readonly list: RevocationListFile;
  readonly stored_at_ms: number;
}

/** A place whose answer was lost and could not yet be reconciled with its node (docs/protocol.md, section 11). */
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
  /**
   * The resources its place would hold on the node (schema v10): an unsettled decision, in flight or
   * with its answer lost, counts in the shared capacity check until it is settled. Absent in records
   * written before v10.
   */
  readonly ram_mb?: number | undefined;
  readonly cpu_pct?: number | undefined;
}

/**
 * A place claiming room on a node before it is sent (schema v10, docs/state.md "Capacity shared by
 * several controllers"): written in the transaction that checked the node's room in the shared state,
 * replaced by the place's unsettled record when the place is sent (in one transaction), removed when
 * the place gives the node up. A claim older than the idempotency claim hold is ignored and removed.
 */
export interface PlaceClaimRecord {
  /** `pc-` and 16 hex, one per place (kept when it moves to another candidate). */
  readonly claim_id: string;
  readonly node_id: string;
  readonly order_id: string;
  /** The instance id the node will derive for this place. */
  readonly instance_id: string;
  readonly ram_mb: number;
  readonly cpu_pct: number;
  /** `<controller id>/<random per process life>` of the controller placing it. */
  readonly claimed_by: string;
  /** When it claimed this node (that controller's clock). */
  readonly claimed_at_ms: number;
}

/** What one node holds in the shared state (see {@link StateStore.nodeLoad}). */
export interface NodeLoad {
  /** Sums of the resources held by its live placements, unsettled decisions and live claims. */
  readonly ram_mb: number;
  readonly cpu_pct: number;
  /** Live placements (a state that is not gone) on the node. */
  readonly placements: number;
  /** Unsettled decisions (places in flight, or with their answer lost) on the node. */
  readonly unsettled: number;
  /** Claims on the node made at or after the cut-off. */
  readonly claims: number;
  /** Claims on the node made before the cut-off (ignored; see {@link StateStore.prunePlaceClaims}). */
  readonly stale_claims: number;
}

/**
 * An idempotency key of a place (issue 15 item 11): the order it made, so that a retry with the same
 * key answers with that order and never makes a second one.
 */
export interface IdempotencyRecord {
  /** The key the client chose (1..128 of `A-Z a-z 0-9 . _ : -`). */
  readonly key: string;
  /** BLAKE3 of the canonical order it came with (a key reused for another order is refused). */
  readonly fingerprint: string;
  readonly order_id: string;
  /** The place's answer once it ended placed or unsettled (JSON), or null while it runs. */
  readonly result: string | null;
  readonly created_at_ms: number;
  /**
   * While the place runs (`result` null): `<controller id>/<claim id>` of the controller placing it
   * (schema v9; null in keys written before, or once settled).
   */
  readonly claimed_by: string | null;
  /** When that controller claimed it (its clock), or null. */
  readonly claimed_at_ms: number | null;
}

/**
 * A declarative job (schema v8, docs/jobs.md): the version the operator wants and where its rollout
 * stands. Its versions are {@link JobVersionRecord}s; its instances {@link JobInstanceRecord}s.
 */
export interface JobRecord {
  readonly name: string;
  /** The desired version (the last one run or reverted to). */
  readonly version: number;
  /** `running`: the reconciler converges it; `stopped`: its instances are removed and none placed. */
  readonly status: 'running' | 'stopped';
  /**
   * The rollout of `version`: `rolling` (old instances are being replaced), `complete` (every instance
   * runs `version` and was healthy), `failed` (a replacement failed its health check and auto_revert
   * is off: the rollout stopped).
   */
  readonly rollout: 'rolling' | 'complete' | 'failed';
  /** The last version whose rollout completed (what auto_revert goes back to), or null. */
  readonly stable_version: number | null;
  /** Why the job cannot converge right now (no node fits, the package is revoked), or null. */
  readonly blocked: string | null;
  /** Why the rollout failed or was reverted, or null. */
  readonly detail: string | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/** One version of a job (immutable once written): its spec, the package it runs and why it was made. */
export interface JobVersionRecord {
  readonly job: string;
  /** 1, 2, ... in the order they were made. */
  readonly version: number;
  /** The parsed job file (defaults filled in). */
  readonly spec: JobSpec;
  /** `jobSpecHash` of the spec and the manifest hash. */
  readonly spec_hash: string;
  /** The package it runs, held in the controller's package store. */
  readonly manifest_hash: string;
  readonly workload: string;
  readonly workload_version: string;
  /** `run` (an operator's job run), `revert` (an operator's revert), `auto_revert` (a failed update). */
  readonly cause: 'run' | 'revert' | 'auto_revert';
  /** For a revert: the version whose spec it copies; else null. */
  readonly reverted_from: number | null;
  /** The operator who made it (`Actor.name`), or null for the controller itself. */
  readonly actor: string | null;
  readonly created_at_ms: number;
}

/** An instance that belongs to a job version (the reconciler placed it; the rescheduler leaves it alone). */
export interface JobInstanceRecord {
  readonly instance_id: string;
  readonly job: string;
  readonly version: number;
  readonly node_id: string;
  readonly order_id: string;
  readonly placed_at_ms: number;
  /** When it was first seen healthy (its health check held for min_healthy_time), or null. */
  readonly healthy_at_ms: number | null;
}

/**
 * Where the controller keeps its state (docs/lifecycle.md): targets, orders, placements, unsettled
 * decisions, pending reschedules, alerts and the revocation list it distributes (with each node's
 * acknowledged generation). Every write is durable when it returns, except inside {@link StateStore.grouped}
 * (group commit: durable once {@link StateStore.durable} resolves); {@link StateStore.transaction} groups writes
 * atomically (all or none). Implementations: `SqliteStateStore` (the default, an embedded SQLite
 * database); a server database can take its place behind this interface. Calls are synchronous.
 */
export interface StateStore {
  /** Runs `fn` in one transaction: every write inside lands, or none does (when `fn` throws). */
  transaction<T>(fn: () => T): T;

  getTarget(nodeId: string): TargetRecord | undefined;
  listTargets(): TargetRecord[];
  /**
   * The node ids of the targets at `url`, without reading the records (optional: a store without it
   * is searched with `listTargets`). Adding a node asks it, so it must not cost a read of every target.
   */
  targetIdsAt?(url: string): string[];
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

  /** Idempotency keys of places (kept `IDEMPOTENCY_KEY_TTL_MS`). */
  getIdempotencyKey(key: string): IdempotencyRecord | undefined;
  putIdempotencyKey(record: IdempotencyRecord): void;
  removeIdempotencyKey(key: string): boolean;
  /** Removes the keys created before `beforeMs`; returns how many. */
  pruneIdempotencyKeys(beforeMs: number): number;

  getUnsettled(decisionId: string): UnsettledRecord | undefined;
  listUnsettled(): UnsettledRecord[];
  putUnsettled(record: UnsettledRecord): void;
  removeUnsettled(decisionId: string): boolean;

  /**
   * Capacity shared by several controllers (schema v10): the places claiming room on a node before
   * they are sent, and what a node holds. `nodeLoad` reads one node's rows through indexes (never the
   * fleet's): its live placements, its unsettled decisions, and its claims made at or after
   * `claimsSinceMs` (and how many are older). Run it in {@link StateStore.transaction} with the claim write, so that two
   * controllers claiming one node serialise.
   */
  getPlaceClaim(claimId: string): PlaceClaimRecord | undefined;
  /** Every claim, oldest first (for copying a state and for operators). */
  listPlaceClaims(): PlaceClaimRecord[];
  putPlaceClaim(record: PlaceClaimRecord): void;
  removePlaceClaim(claimId: string): boolean;
  nodeLoad(nodeId: string, claimsSinceMs: number): NodeLoad;
  /** Removes the claims on `nodeId` made before `beforeMs`; returns how many. */
  prunePlaceClaims(nodeId: string, beforeMs: number): number;

  getReschedule(instanceId: string): RescheduleRecord | undefined;
  listReschedules(): RescheduleRecord[];
  putReschedule(record: RescheduleRecord): void;
  removeReschedule(instanceId: string): boolean;

  getAlert(alertId: string): AlertRecord | undefined;
  listAlerts(): AlertRecord[];
  putAlert(record: AlertRecord): void;

  /** What the operator set on nodes (cordon, labels; schema v7). */
  getNodeMeta(nodeId: string): NodeMetaRecord | undefined;
  listNodeMeta(): NodeMetaRecord[];
  putNodeMeta(record: NodeMetaRecord): void;
  removeNodeMeta(nodeId: string): boolean;

  /** Declarative jobs (schema v8). */
  getJob(name: string): JobRecord | undefined;
  listJobs(): JobRecord[];
  putJob(record: JobRecord): void;
  removeJob(name: string): boolean;

  /** A job's versions: immutable; `putJobVersion` of an existing (job, version) throws `StateError` `corrupt`. */
  getJobVersion(job: string, version: number): JobVersionRecord | undefined;
  /** The versions of `job`, oldest first. */
  listJobVersions(job: string): JobVersionRecord[];
  putJobVersion(record: JobVersionRecord): void;

  /** Which instances belong to which job version. */
  getJobInstance(instanceId: string): JobInstanceRecord | undefined;
  /** The instances of `job` (every job's when absent), ordered by `placed_at_ms`. */
  listJobInstances(job?: string): JobInstanceRecord[];
  putJobInstance(record: JobInstanceRecord): void;
  removeJobInstance(instanceId: string): boolean;

  getRevocationAck(nodeId: string): RevocationAckRecord | undefined;
  listRevocationAcks(): RevocationAckRecord[];
  putRevocationAck(record: RevocationAckRecord): void;
  removeRevocationAck(nodeId: string): boolean;

  /** The revocation list the controller distributes, if it holds one. */
  getRevocationList(): HeldRevocationList | undefined;
  putRevocationList(record: HeldRevocationList): void;

  /** The schema version the store is at. */
  readonly schemaVersion: number;
  /** Closes the store; later calls throw `StateError` `closed`. */
  close(): void;

  /**
   * Group commit (optional): runs `fn` so that its writes (and those of everything it awaits) may be
   * batched with those of other groups into one durable transaction; inside it a write is durable
   * only once {@link StateStore.durable} resolves. Writes outside every group stay durable when they
   * return. Absent: every write is durable when it returns.
   */
  grouped?<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Resolves once every write made before the call is durable; rejects (`StateError`) when the
   * transaction that held them failed, and then they were undone. Absent: writes are durable when
   * they return.
   */
  durable?(): Promise<void>;
  /**
   * Calls `listener` with the node id of every target or node meta record (labels, cordon) written or
   * removed, after the write (optional:
   * without it the controller reads every target again for each place).
   */
  watchTargets?(listener: (nodeId: string) => void): void;
  /**
   * Calls `listener` with each change another controller sharing this state made to what controllers
   * keep in memory (a node's target or operator record, the held revocation list), and with `resync`
   * when changes may have been missed (the notifications' connection was down) and periodically
   * (optional: a store only one controller uses has none). See docs/state.md, "Several controllers:
   * what each one sees of the others' writes".
   */
  watchShared?(listener: (change: SharedStateChange) => void): void;
}

/** A change of the shared state made by another controller (see `StateStore.watchShared`). */
export type SharedStateChange =
  /** Node `node_id`'s target record was written or removed. */
  | { readonly kind: 'target'; readonly node_id: string }
  /** Node `node_id`'s operator record (labels, cordon) was written or removed. */
  | { readonly kind: 'meta'; readonly node_id: string }
  /** The held revocation list was replaced. */
  | { readonly kind: 'revocations' }
  /** Anything may have changed: read it all again (`why` says what led to it). */
  | { readonly kind: 'resync'; readonly why: string };
