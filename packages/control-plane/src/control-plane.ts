import { join } from 'node:path';
import type { Chain } from '@heddle/chain';
import { type KeyPair, nodeIdFromPublicKey } from '@heddle/envelope';
import type { ApprovalQueue, Gate } from '@heddle/gate';
import { isGone, type NodeTier, type RevocationCheck } from '@heddle/model';
import type { KindRegistry, RevocationListFile, TrustAnchors } from '@heddle/package';
import type { Liveness } from '@heddle/placement';
import type { WireClientOptions } from '@heddle/wire';
import { ackAlert } from './alerts.js';
import type {
  ApprovalEventKind,
  ApprovalListener,
  ApprovalView,
  ApprovalViewState,
} from './approval-view.js';
import { PlaneApprovals } from './approvals.js';
import { Caller } from './caller.js';
import { type PlaneConfig, planeConfig } from './config.js';
import { PlaneError } from './errors.js';
import { HeldPlaces } from './held-places.js';
import { hostDriver } from './host-driver.js';
import { notePlaneStart } from './idempotency.js';
import {
  instanceLogs,
  instanceStatus,
  placementOf,
  startInstance,
  stopInstance,
  unloadInstance,
} from './instance-verbs.js';
import type { JobSpec } from './job-file.js';
import {
  type JobPlanView,
  type JobRunView,
  type JobStatusView,
  type JobVersionView,
  jobHistory,
  jobList,
  jobStatus,
  planJob,
  revertJob,
  runJob,
  stopJob,
} from './job-ops.js';
import { reconcileJob, reconcileJobs } from './job-reconcile.js';
import { LifecycleTicker, type TickReport } from './lifecycle-tick.js';
import { LiveEngineView } from './live-view.js';
import { NodeBook } from './node-book.js';
import type { NodeDriver } from './node-driver.js';
import { NodeDrivers, refreshAll } from './node-drivers.js';
import { type DrainReport, drainNode, type LabelChange, setCordon, setLabels } from './node-ops.js';
import { type NodeView, nodeView } from './node-view.js';
import type { PlaceOrderInput } from './order.js';
import { PackageStore } from './package-store.js';
import { type PlaceHooks, type PlaceResult, placeApproved, placeOrder } from './place.js';
import { instanceIdentity } from './place-claims.js';
import { chainChange, holdReservation, resourcesOf, stageState } from './placement-life.js';
import type { PlaneContext } from './plane-context.js';
import { PlaneEvents, type PlaneEventType } from './plane-events.js';
import { eventingStore } from './plane-events-store.js';
import { Reservations } from './reservations.js';
import { applyRevocations, HeldRevocations, type RevocationPushReport } from './revocation-push.js';
import { type SettleReport, settleUnsettled } from './settle.js';
import { fillPlacementResources } from './shared-capacity.js';
import { SharedStateWatch } from './shared-watch.js';
import type {
  AlertRecord,
  PlacementRecord,
  RescheduleRecord,
  RevocationAckRecord,
  StateStore,
  UnsettledRecord,
} from './state-store.js';

/** The plane event each approval event is published as (`placed` and `failed`: its held place's outcome). */
const APPROVAL_EVENT_TYPES = {
  requested: 'approval.pending',
  approved: 'approval.approved',
  rejected: 'approval.rejected',
  expired: 'approval.expired',
  placed: 'approval.updated',
  failed: 'approval.updated',
} as const satisfies Record<ApprovalEventKind, PlaneEventType>;

/** How many explanations of its latest decisions a plane keeps in memory (see `ControlPlane.explanation`). */
const EXPLANATIONS_KEPT = 256;

/** What a {@link ControlPlane} is built from. */
export interface ControlPlaneOptions {
  /** The controller's key: it signs every request; its node id is the requester and the gate's agent. */
  readonly keys: KeyPair;
  /** Where targets, orders, placements and unsettled decisions are kept. */
  readonly store: StateStore;
  /** The audit chain (decisions and attempts, source `workload.placement`; the gate's own records). */
  readonly chain: Chain;
  /** The governance gate (`workload.place` per node). */
  readonly gate: Gate;
  /** The controller's trust anchors (packages are verified against them before anything is placed). */
  readonly anchors: TrustAnchors;
  /** The controller's revocations. */
  readonly revocations: RevocationCheck;
  /** Where the controller keeps the packages it places (`<stateDir>/packages`). */
  readonly stateDir: string;
  /** Tunables (defaults: {@link DEFAULT_PLANE_CONFIG}). */
  readonly config?: Partial<PlaneConfig>;
  /** Connection options (a CA for `wss://` hosts). */
  readonly wire?: WireClientOptions;
  /** Kinds accepted (default `@heddle/package`'s). */
  readonly kinds?: KindRegistry;
  /** The clock (Unix ms; default `Date.now`). */
  readonly now?: () => number;
  /**
   * Drivers of other kinds of node besides the built-in `heddle-host` one (`hostDriver`), such as
   * the Cognitum Seed's (`seedDriver()` of `@heddle/seed-adapter/controller`).
   */
  readonly drivers?: readonly NodeDriver[];
  /** The event bus the plane publishes its changes to (default: a new one; see {@link ControlPlane.events}). */
  readonly events?: PlaneEvents;
  /**
   * The approval queue the `gate` was given (`GateOptions.approvals`): a place the policy defers is
   * then held under an approval request instead of refused (see {@link ControlPlane.approve}); the
   * held places are kept in `<stateDir>/held-places.json`. Without it a defer refuses the place.
   */
  readonly approvals?: ApprovalQueue;
}

/**
 * The controller (docs/lifecycle.md): learns hosts by signed describe, places signed packages through
 * governance and the placement engine, operates the instances, reconciles lost answers and keeps its
 * state in a {@link StateStore}. Every operation is chained. See docs/architecture.md and
 * docs/operator-guide.md.
 */
export class ControlPlane {
  /** The controller's node id. */
  readonly nodeId: string;
  /**
   * Where the plane publishes its changes (docs/operator-api.md, "Event stream"): instances, nodes
   * and alerts as they are written to the store, node liveness after each tick and refresh.
   */
  readonly events: PlaneEvents;
  readonly #ctx: PlaneContext;
  readonly #liveness = new Map<string, Liveness>();
  readonly #explanations = new Map<string, PlaceResult['explanation']>();
  readonly #held: HeldRevocations;
  /** Follows other controllers' writes to the shared state (set once the context is built). */
  readonly #shared: SharedStateWatch | undefined;
  readonly #ticker: LifecycleTicker;
  #settling: Promise<SettleReport> | undefined;
  #ticking: Promise<TickReport> | undefined;
  #jobTail: Promise<void> = Promise.resolve();

  constructor(options: ControlPlaneOptions) {
    const config = planeConfig(options.config);
    const now = options.now ?? Date.now;
    this.nodeId = nodeIdFromPublicKey(options.keys.publicKey);
    this.events = options.events ?? new PlaneEvents({ now });
    const store = eventingStore(options.store, this.events);
    const caller = new Caller(options.keys, config, { ...(options.wire ?? {}), now });
    const packages = new PackageStore({
      dir: join(options.stateDir, 'packages'),
      anchors: options.anchors,
      // Its own revocations, and the shared state's held list (another controller's push).
      revocations: {
        firstRevoked: (refs) =>
          options.revocations.firstRevoked(refs) ?? this.#shared?.revocations.firstRevoked(refs),
      },
      ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
    });
    const book = new NodeBook(store, caller, config, now);
    const drivers = new NodeDrivers([hostDriver, ...(options.drivers ?? [])]);
    const approvals =
      options.approvals === undefined
        ? undefined
        : new PlaneApprovals(options.approvals, new HeldPlaces(options.stateDir), (held, grant) =>
            placeApproved(this.#ctx, held, grant),
          );
    this.#ctx = {
      ...(approvals === undefined ? {} : { approvals }),
      nodeId: this.nodeId,
      store,
      book,
      view: new LiveEngineView({ book, store, drivers }),
      packages,
      caller,
      gate: options.gate,
      chain: options.chain,
      config,
      now,
      reservations: new Reservations((id) => options.store.getNodeMeta(id)?.labels),
      drivers,
      stateDir: options.stateDir,
      inProgress: new Set(),
      idempotent: new Map(),
    };
    notePlaneStart(this.#ctx);
    this.#held = new HeldRevocations(options.anchors);
    this.#shared = new SharedStateWatch(this.#ctx, this.#held);
    this.#ticker = new LifecycleTicker(this.#ctx, this.#held);
    this.#restoreReservations();
    this.#noteLiveness(false);
    approvals?.subscribe((e) => {
      const type = APPROVAL_EVENT_TYPES[e.kind];
      const a = e.approval;
      this.events.publish(type, {
        approval_id: a.approval_id,
        state: a.state,
        workload: a.place?.workload ?? null,
        node_id: a.place?.node_id ?? null,
        by: a.decided_by,
        place_status: a.place?.status ?? null,
      });
    });
  }

  /** Publishes `node.liveness_changed` for every node whose liveness differs from the last look. */
  #noteLiveness(publish = true): void {
    const ctx = this.#ctx;
    const now = ctx.now();
    const seen = new Set<string>();
    for (const t of ctx.store.listTargets()) {
      seen.add(t.node_id);
      const to = ctx.book.liveness.get(t.node_id, now);
      const from = this.#liveness.get(t.node_id) ?? 'unknown';
      this.#liveness.set(t.node_id, to);
      if (publish && from !== to)
        this.events.publish('node.liveness_changed', { node_id: t.node_id, from, to });
    }
    for (const id of [...this.#liveness.keys()]) if (!seen.has(id)) this.#liveness.delete(id);
  }

  /**
   * {@link ControlPlane.#noteLiveness} for one node (a node just added): without reading every target,
   * so that adding N nodes stays linear. Other nodes' changes are published by the next tick or refresh.
   */
  #noteLivenessOf(nodeId: string): void {
    const to = this.#ctx.book.liveness.get(nodeId, this.#ctx.now());
    const from = this.#liveness.get(nodeId) ?? 'unknown';
    this.#liveness.set(nodeId, to);
    if (from !== to) this.events.publish('node.liveness_changed', { node_id: nodeId, from, to });
  }

  /**
   * Resources of the live placements are held again (from the held packages' envelopes), and so are
   * those of unsettled decisions (their lost answer may have placed them).
   */
  #restoreReservations(): void {
    const ctx = this.#ctx;
    const resources = new Map<string, { ram_mb: number; cpu_pct: number }>();
    for (const p of ctx.store.listPlacements()) {
      if (isGone(p.state)) continue;
      holdReservation(ctx, p, resources);
      fillPlacementResources(ctx, p, resources);
    }
    for (const u of ctx.store.listUnsettled()) {
      const order = ctx.store.getOrder(u.order_id);
      if (order === undefined || u.expected_instance_id === null) continue;
      const r = resourcesOf(ctx, order.manifest_hash, resources);
      ctx.reservations.holdUnsettled(
        u.decision_id,
        {
          node_id: u.node_id,
          instance_id: u.expected_instance_id,
          order_id: u.order_id,
          workload: order.workload,
          package_id: order.package_id,
          identity: instanceIdentity(order),
        },
        r.ram_mb,
        r.cpu_pct,
      );
    }
  }

  /**
   * Closes the sessions kept to the hosts (docs/protocol.md 13.1): calls still open on them fail as
   * lost, and later calls are not sent. The state store and the chain are the caller's to close.
   */
  close(): Promise<void> {
    return this.#ctx.caller.close();
  }

  /** The tunables in force. */
  get config(): PlaneConfig {
    return this.#ctx.config;
  }

  /** Learns the node at `url` (signed describe) under `tier`, requiring `key` when given. */
  async addNode(url: string, options: { tier: NodeTier; key?: string }): Promise<NodeView> {
    const target = await this.#ctx.book.add(url, options);
    this.#noteLivenessOf(target.node_id);
    return this.#view(target);
  }

  /**
   * Registers the node at `url` through the driver of `kind` (`options` are that driver's, checked by
   * it: a Cognitum Seed's are its tier, certificate pin and token file); `no_driver` for a kind this
   * plane has no driver for.
   */
  async addNodeOf(kind: string, url: string, options: unknown): Promise<NodeView> {
    const driver = this.#ctx.drivers.get(kind);
    if (driver.add === undefined) {
      throw new PlaneError('invalid_input', `nodes of kind ${kind} are not added this way`, {
        field: 'kind',
      });
    }
    return this.#view(await driver.add(this.#ctx, url, options));
  }

  /** The kinds of node this plane drives (`host`, and those of its `drivers`). */
  nodeKinds(): string[] {
    return this.#ctx.drivers.kinds();
  }

  /** Pins `key` for the node `nodeId` (a replaced machine, or a first-use key made explicit). */
  async pinNode(nodeId: string, key: string, tier?: NodeTier): Promise<NodeView> {
    return this.#view(await this.#ctx.book.pin(nodeId, key, tier));
  }

  /**
   * Forgets a node (refused while it has placements, unless `force`: then what the controller had
   * there becomes `lost`, chained; nothing is unloaded on the node and nothing is rescheduled).
   */
  async removeNode(nodeId: string, force = false): Promise<NodeView> {
    const ctx = this.#ctx;
    const target = ctx.book.get(nodeId);
    const view = this.#view(target);
    const lost = ctx.book.remove(nodeId, force, (p) =>
      stageState(ctx, p.instance_id, 'lost', 'node removed by the operator (--force)'),
    );
    ctx.store.removeNodeMeta(nodeId);
    for (const change of lost) await chainChange(ctx, change);
    ctx.drivers.find(target)?.forget?.(nodeId);
    return view;
  }

  /**
   * Cordons a node (`unknown_node` otherwise): no new places go there (the engine rejects it with the
   * constraint `cordoned`); what runs there keeps running. Stored and chained (`workload.node`).
   */
  async cordonNode(nodeId: string): Promise<NodeView> {
    await setCordon(this.#ctx, nodeId, true);
    return this.node(nodeId);
  }

  /** Lifts a node's cordon (stored and chained). */
  async uncordonNode(nodeId: string): Promise<NodeView> {
    await setCordon(this.#ctx, nodeId, false);
    return this.node(nodeId);
  }

  /**
   * Sets and removes a node's labels (`invalid_input` naming the label for a bad name or value);
   * stored and chained. Labels are matched by order constraints and spread over by the engine.
   */
  async labelNode(nodeId: string, change: LabelChange): Promise<NodeView> {
    await setLabels(this.#ctx, nodeId, change);
    return this.node(nodeId);
  }

  /**
   * Drains a node (see `drainNode`): cordons it and moves its instances elsewhere through the gate and
   * the engine, each move chained; leaves what may not move with an alert naming it.
   */
  async drainNode(nodeId: string): Promise<DrainReport> {
    const report = await drainNode(this.#ctx, nodeId);
    // The instances of jobs a drain leaves to their reconciler are moved now, not at the next tick.
    if (report.left.some((l) => l.reason === 'job'))
      await this.#jobsSerial(() => reconcileJobs(this.#ctx, this.#heldList));
    return report;
  }

  /** Describes every known node again (in parallel, each bounded on its own); returns them all. */
  async refreshNodes(): Promise<NodeView[]> {
    const ctx = this.#ctx;
    await refreshAll(ctx).catch(() => undefined);
    this.#noteLiveness();
    return this.nodes();
  }

  /** Every known node. */
  nodes(): NodeView[] {
    return this.#ctx.store.listTargets().map((t) => this.#view(t));
  }

  /** One node; `unknown_node` otherwise. */
  node(nodeId: string): NodeView {
    return this.#view(this.#ctx.book.get(nodeId));
  }

  #view(t: Parameters<typeof nodeView>[0]): NodeView {
    return nodeView(t, this.#ctx.book, this.#ctx.store, this.#ctx.now());
  }

  /**
   * Places an order (see `placeOrder`). The order is typed: an operator's order is parsed once, where
   * it arrives (`parseOrder`, the operator API), and passed on as it is.
   */
  place(order: PlaceOrderInput, hooks: PlaceHooks = {}): Promise<PlaceResult> {
    return placeOrder(this.#ctx, order, hooks).then((r) => {
      if (r.decision_id !== null) {
        this.#explanations.set(r.decision_id, r.explanation);
        while (this.#explanations.size > EXPLANATIONS_KEPT) {
          const oldest = this.#explanations.keys().next().value;
          if (oldest === undefined) break;
          this.#explanations.delete(oldest);
        }
      }
      return r;
    });
  }

  /**
   * The engine's explanation of decision `decisionId`, when it was one of the last
   * {@link EXPLANATIONS_KEPT} places of this process (explanations are not chained; a reschedule's is
   * not kept).
   */
  explanation(decisionId: string): PlaceResult['explanation'] | undefined {
    return this.#explanations.get(decisionId);
  }

  /** Every placement this controller knows, unloaded ones included. */
  instances(): PlacementRecord[] {
    return this.#ctx.store.listPlacements();
  }

  /** One placement; `unknown_instance` otherwise. */
  instance(instanceId: string): PlacementRecord {
    return placementOf(this.#ctx, instanceId);
  }

  /** The node's status of an instance (and the placement, updated from it). */
  status(instanceId: string): ReturnType<typeof instanceStatus> {
    return instanceStatus(this.#ctx, instanceId);
  }

  /** The last `lines` lines of an instance's output. */
  logs(instanceId: string, lines?: number): ReturnType<typeof instanceLogs> {
    return instanceLogs(this.#ctx, instanceId, lines);
  }

  /** Starts an instance. */
  start(instanceId: string): Promise<PlacementRecord> {
    return startInstance(this.#ctx, instanceId);
  }

  /** Stops an instance; returns the placement and the node's evidence. */
  stop(instanceId: string, graceMs?: number): ReturnType<typeof stopInstance> {
    return stopInstance(this.#ctx, instanceId, graceMs);
  }

  /** Unloads an instance. */
  unload(instanceId: string): Promise<PlacementRecord> {
    return unloadInstance(this.#ctx, instanceId);
  }

  /** Decisions whose answer was lost and not yet reconciled. */
  unsettled(): UnsettledRecord[] {
    return this.#ctx.store.listUnsettled();
  }

  /**
   * Tries to settle every unsettled decision with its node (see `settleUnsettled`). One pass at a
   * time: a call while a pass runs gets that pass's report.
   */
  settle(timeoutMs?: number): Promise<SettleReport> {
    this.#settling ??= settleUnsettled(this.#ctx, timeoutMs).finally(() => {
      this.#settling = undefined;
    });
    return this.#settling;
  }

  /**
   * The lifecycle tick (docs/lifecycle.md, see `LifecycleTicker`): refresh every node, reconcile each
   * reachable host's instances with its listing, detect dead nodes, run the reschedules and orphan
   * unloads that are due, push the revocation list to hosts behind, settle. One tick at a time: a
   * call while one runs gets that tick's report. `fence` (a leadership check) is asked before each
   * step that writes; once false, the tick stops there (see `LifecycleTicker.tick`).
   */
  tick(fence?: () => boolean): Promise<TickReport> {
    this.#ticking ??= this.#expireApprovals()
      .then(() => this.#ticker.tick(() => this.settle(), fence))
      .then(async (report) => {
        // A controller that lost its leadership lease reconciles no job either.
        if (fence !== undefined && !fence()) return report;
        const jobs = await this.#jobsSerial(() => reconcileJobs(this.#ctx, this.#heldList));
        return { ...report, jobs: jobs.reports, errors: [...report.errors, ...jobs.errors] };
      })
      .finally(() => {
        this.#ticking = undefined;
        this.#noteLiveness();
      });
    return this.#ticking;
  }

  /**
   * What running the job file `spec` would change (docs/jobs.md, `job plan`): instances to place,
   * replace, adopt and remove per node, each place explained by the engine. Nothing is written or chained.
   */
  planJob(spec: JobSpec): Promise<JobPlanView> {
    return planJob(this.#ctx, spec);
  }

  /** Runs a job file: a new version (chained) unless it is what runs; converged by the next tick. */
  runJob(spec: JobSpec): Promise<JobRunView> {
    return runJob(this.#ctx, spec);
  }

  /** Reverts job `name` to its version `version`, as a new version (chained). */
  revertJob(name: string, version: number): Promise<JobRunView> {
    return revertJob(this.#ctx, name, version);
  }

  /** Stops job `name` (chained) and takes its instances down. */
  stopJob(name: string): Promise<JobStatusView> {
    return stopJob(this.#ctx, name, (n) => this.#reconcileJob(n));
  }

  /** Every job as it stands. */
  jobs(): JobStatusView[] {
    return jobList(this.#ctx);
  }

  /** Job `name` as it stands (`unknown_job` otherwise). */
  job(name: string): JobStatusView {
    return jobStatus(this.#ctx, name);
  }

  /** The versions of job `name`, oldest first. */
  jobHistory(name: string): JobVersionView[] {
    return jobHistory(this.#ctx, name);
  }

  /** Reconciles one job now, after any reconciliation in progress (the reconciler never runs twice at once). */
  async #reconcileJob(name: string): Promise<void> {
    await this.#jobsSerial(() => reconcileJob(this.#ctx, name, this.#heldList));
  }

  /** The revocation list this controller distributes (a job's package is checked against it). */
  readonly #heldList = (): ReturnType<HeldRevocations['current']> => this.#held.current(this.#ctx);

  /** Runs `fn` after every job reconciliation before it (one at a time: two would place the same instance twice). */
  #jobsSerial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#jobTail.then(fn, fn);
    this.#jobTail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Expires overdue approval requests (a failure is left to the next tick and to the next listing). */
  async #expireApprovals(): Promise<void> {
    await this.#ctx.approvals?.expireDue().catch(() => 0);
  }

  /**
   * Approval requests of the gate's queue and the places they hold, oldest first (overdue ones
   * expired first); only those in `state` when given. Empty when the plane keeps no queue.
   */
  async approvals(state?: ApprovalViewState): Promise<ApprovalView[]> {
    return (await this.#ctx.approvals?.list(state)) ?? [];
  }

  /** One approval request (`approval_not_found` otherwise). */
  async approval(id: string): Promise<ApprovalView> {
    return this.#queue().get(id);
  }

  /**
   * Approves a pending request as `by` with an optional `note` (both chained): the gate decides it
   * again against the policy and revocations in force now; a permit places the held order through the
   * engine as usual (the approved check counts as permitted), a deny refuses it naming why. Answers
   * once the place is done: the request and what became of its place.
   */
  async approve(id: string, by: string, note?: string): Promise<ApprovalView> {
    return this.#queue().approve(id, by, note);
  }

  /** Rejects a pending request as `by` with an optional `note` (chained); its held place is refused. */
  async reject(id: string, by: string, note?: string): Promise<ApprovalView> {
    return this.#queue().reject(id, by, note);
  }

  /**
   * Tells `listener` of every approval event (requested, approved, rejected, expired, and the held
   * place's outcome: placed or failed), synchronously after it is stored; returns the function that
   * stops it. A plane without a queue tells nothing.
   */
  onApproval(listener: ApprovalListener): () => void {
    return this.#ctx.approvals?.subscribe(listener) ?? (() => {});
  }

  #queue(): PlaneApprovals {
    const a = this.#ctx.approvals;
    if (a === undefined) {
      throw new PlaneError(
        'approvals_disabled',
        'this controller keeps no approval queue: a place its policy defers is refused',
      );
    }
    return a;
  }

  /** Alerts raised (pinned or non-migratable workloads lost, lineages past their reschedule limit), oldest first. */
  alerts(options: { readonly unacknowledged?: boolean } = {}): AlertRecord[] {
    const all = this.#ctx.store.listAlerts();
    return options.unacknowledged === true ? all.filter((a) => a.acked_at_ms === null) : all;
  }

  /** Acknowledges an alert (kept, marked, chained); `unknown_alert` for an unknown id. */
  ackAlert(alertId: string): Promise<AlertRecord> {
    return ackAlert(this.#ctx, alertId);
  }

  /** Reschedules waiting for a node (persisted: a restart continues them). */
  reschedules(): RescheduleRecord[] {
    return this.#ctx.store.listReschedules();
  }

  /**
   * Takes a signed revocation list and distributes it (see `applyRevocations`): verified against the
   * controller's operator keys, stored, the placements it names marked `revoked` at once, then pushed
   * to every reachable host behind it; answers per node. Hosts that could not be reached get it on a
   * later tick.
   */
  pushRevocations(list: RevocationListFile): Promise<RevocationPushReport> {
    const applied = applyRevocations(this.#ctx, this.#held, list);
    // Stored (or refused) before the first await of the push: its package checks apply at once.
    this.#shared?.tookOwnList();
    return applied;
  }

  /**
   * Calls `listener` with each newer revocation list another controller sharing this state stored
   * (seen by notification or by the periodic re-read: docs/state.md): the daemon puts it in force
   * in its own list file, so its gate refuses what it revokes too.
   */
  watchSharedRevocations(listener: (list: RevocationListFile, generation: number) => void): void {
    this.#shared?.watchRevocations(listener);
  }

  /** The generation of the revocation list this controller distributes (0: none) and each node's acknowledgement. */
  revocationStatus(): { generation: number; nodes: RevocationAckRecord[] } {
    return {
      generation: this.#ctx.store.getRevocationList()?.generation ?? 0,
      nodes: this.#ctx.store.listRevocationAcks(),
    };
  }
}
