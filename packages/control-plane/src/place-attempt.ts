import { canTransition, isGone } from '@heddle/model';
import type { CogBody, VerifiedWorkload } from '@heddle/package';
import { CallFailure, type InstanceView, type PlaceBodyInput } from '@heddle/protocol';
import { DirPackageSource, type PackageSource } from '@heddle/wire';
import { type ApprovalGrant, grantCovers } from './approvals.js';
import { countingSource } from './caller.js';
import type { PackageAttempt } from './node-driver.js';
import type { AttemptOutcome, PlaceHooks } from './place.js';
import { expectedInstanceId, instanceIdentity } from './place-claims.js';
import { chainAttempt } from './place-common.js';
import { packageChecks } from './place-gate.js';
import { chainChange, type StagedChange, stageNew, stageState } from './placement-life.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import { reconcilePlace } from './reconcile.js';
import type { PlaceClaim } from './reservations.js';
import type {
  OrderRecord,
  PlacementRecord,
  PlacementState,
  TargetRecord,
  UnsettledRecord,
} from './state-store.js';

/** What a reschedule adds to a dispatch: a shorter timeout and the lineage of the new placement. */
export interface AttemptExtras {
  /** Timeout of the `place` (default: the config's place timeout). */
  readonly timeoutMs?: number;
  /** The instance the new one replaces. */
  readonly replaces?: string;
  /** Its reschedule count in the lineage. */
  readonly reschedules?: number;
  /** The claim of the place in flight: it becomes the instance's reservation, or the unsettled decision's. */
  readonly claim?: PlaceClaim;
  /** An approval that covers one gate check (its action and exact context): that check is not asked again. */
  readonly approved?: ApprovalGrant;
}

/** One dispatch: its outcome, and the placement when it placed. */
export interface Attempt {
  readonly outcome: AttemptOutcome;
  readonly placement: PlacementRecord | null;
}

/**
 * Dispatches a place to one candidate: a chained gate check, the signed call serving the package, and
 * the outcome chained; an indeterminate one is reconciled with that node before anything else.
 */
export async function attempt(
  ctx: PlaneContext,
  verified: VerifiedWorkload<CogBody>,
  order: OrderRecord,
  decisionId: string,
  nodeId: string,
  variant: string,
  emulated: boolean,
  hooks: PlaceHooks,
  extras: AttemptExtras = {},
): Promise<Attempt> {
  return attemptPackage(
    ctx,
    { verified, order, decisionId, nodeId, variant, emulated, hooks, extras },
    hostSend(ctx),
  );
}

/** What a place sends to one node, and the answer it waits for (see {@link attemptPackage}). */
export interface PlaceSend {
  /** The node's record (its URL and the key it must answer with). */
  readonly target: TargetRecord;
  /** The `workload.place` body. */
  readonly body: PlaceBodyInput;
  /** The chained decision the place carries. */
  readonly decisionId: string;
  /** The package, served to the node on request. */
  readonly source: PackageSource;
  /** Timeout of the call, when not the config's place timeout. */
  readonly timeoutMs?: number;
}

/**
 * How a place reaches a node: resolves with the instance the node reports, or rejects with a
 * `CallFailure` (`refused`, `unreachable`, `indeterminate`: the last one is reconciled with
 * `workload.status` before anything else).
 */
export type PlaceTransport = (send: PlaceSend) => Promise<InstanceView>;

/** The host driver's transport: the signed `workload.place` call (the package served over it). */
function hostSend(ctx: PlaneContext): PlaceTransport {
  return async (s) => {
    const r = await ctx.caller.call({
      url: s.target.url,
      target: s.target.node_id,
      method: 'workload.place',
      body: s.body,
      decisionId: s.decisionId,
      expectedKey: s.target.public_key,
      source: s.source,
      ...(s.timeoutMs === undefined ? {} : { timeoutMs: s.timeoutMs }),
    });
    return r.result;
  };
}

/**
 * One package place on one node, the way a `heddle-host` is placed (a driver of another transport
 * reuses it with its own `send`): the chained gate checks, the decision recorded as unsettled until
 * its answer is, `send`, and the answer recorded (placement, reservation, lifecycle change) and
 * chained; a refusal, an unreachable node or a lost answer are chained as such.
 */
export async function attemptPackage(
  ctx: PlaneContext,
  a: PackageAttempt,
  send: PlaceTransport,
): Promise<Attempt> {
  const { verified, order, decisionId, nodeId, variant, emulated, hooks, extras } = a;
  const target = ctx.book.get(nodeId);
  const view = ctx.view.node(nodeId, ctx.now());
  const finish = (
    o: Omit<AttemptOutcome, 'node_id' | 'variant'>,
    placement: PlacementRecord | null = null,
  ): Promise<Attempt> => chainAttempt(ctx, decisionId, order, { node_id: nodeId, variant, ...o }, placement);
  const node = view ?? { tier: target.tier ?? 'discovered', memory_mb: 0 };
  for (const check of packageChecks(verified, variant, node, emulated)) {
    if (extras.approved !== undefined && grantCovers(extras.approved, check.action, check.context)) continue;
    const gate = await ctx.gate.check(ctx.nodeId, check.action, check.context);
    if (gate.verdict !== 'permit')
      return finish({ outcome: 'gate_denied', code: gate.rule, reason: gate.reason });
  }
  const total = verified.files.reduce((n, f) => n + f.size, 0);
  const dir = lazySource(verified.dir, order.manifest_hash);
  const source =
    hooks.onProgress === undefined
      ? dir
      : countingSource(dir, total, (bytes) => hooks.onProgress?.({ node_id: nodeId, bytes, total }));
  const body: PlaceBodyInput = {
    name: order.workload,
    manifest_hash: order.manifest_hash,
    variant,
    config: { mode: { ...order.mode }, values: { ...order.values } },
    start: order.start,
    ...(hooks.requestId !== undefined && ctx.book.reads(nodeId, 'request_id')
      ? { request_id: hooks.requestId }
      : {}),
  };
  // The request the Caller signs expires at most this late (its clock reads at or after this one).
  const expiresAtMs = ctx.now() + ctx.config.requestTtlMs + 1_000;
  // Until the answer is recorded the decision is unsettled on disk: if the controller dies in between,
  // the next start settles it with this node instead of forgetting it (docs/lifecycle.md).
  const inProgress = markInProgress(ctx, order, decisionId, nodeId, variant, verified, extras.claim);
  try {
    // With group commit, the order, the key and this unsettled record reach the disk before the place
    // leaves (one fsync shared with the places in flight).
    await ctx.store.durable?.();
    const answer = await send({
      target,
      body,
      decisionId,
      source,
      ...(extras.timeoutMs === undefined ? {} : { timeoutMs: extras.timeoutMs }),
    });
    ctx.book.contact(nodeId);
    const staged = ctx.store.transaction(() => {
      const p = record(ctx, placedPackage(verified), order, decisionId, nodeId, answer, extras);
      ctx.store.removeUnsettled(decisionId);
      return p;
    });
    extras.claim?.placed(staged.placement.instance_id);
    inProgress.done();
    const placement = await chainChange(ctx, staged, { why: 'placed' });
    return finish({ outcome: 'placed', code: null, reason: null }, placement);
  } catch (err) {
    if (!(err instanceof CallFailure)) {
      inProgress.done(); // kept on disk: settled with the node on the next pass
      extras.claim?.unsettled(decisionId);
      throw err;
    }
    if (err.code !== 'indeterminate') inProgress.clear();
    if (err.code === 'refused') {
      return finish({
        outcome: 'refused',
        code: err.refusal?.code ?? 'refused',
        reason: err.refusal?.reason ?? err.message,
      });
    }
    if (err.code === 'unreachable') {
      ctx.book.liveness.failure(nodeId, ctx.now());
      return finish({ outcome: 'unreachable', code: null, reason: err.message });
    }
    await finish({ outcome: 'indeterminate', code: null, reason: err.message });
    try {
      return await settleLost(ctx, verified, order, decisionId, target, variant, expiresAtMs, extras);
    } finally {
      inProgress.done();
    }
  } finally {
    await dir.close();
  }
}

/** An indeterminate place: reconcile with that node before anything else (docs/protocol.md, section 11). */
async function settleLost(
  ctx: PlaneContext,
  verified: VerifiedWorkload<CogBody>,
  order: OrderRecord,
  decisionId: string,
  target: TargetRecord,
  variant: string,
  expiresAtMs: number,
  extras: AttemptExtras,
): Promise<Attempt> {
  const s = await reconcilePlace(ctx, target, decisionId, expiresAtMs);
  const base = { node_id: target.node_id, variant };
  if (s.kind === 'placed') {
    const staged = ctx.store.transaction(() => {
      const p = record(ctx, placedPackage(verified), order, decisionId, target.node_id, s.instance, extras);
      ctx.store.removeUnsettled(decisionId);
      return p;
    });
    extras.claim?.placed(staged.placement.instance_id);
    const placement = await chainChange(ctx, staged, { why: 'reconciled' });
    await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
      phase: 'reconciled',
      decision_id: decisionId,
      node_id: target.node_id,
      outcome: 'placed',
      instance_id: placement.instance_id,
    });
    return {
      outcome: { ...base, outcome: 'placed', code: null, reason: 'reconciled: the node had placed it' },
      placement,
    };
  }
  if (s.kind === 'nothing') {
    ctx.store.removeUnsettled(decisionId);
    await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
      phase: 'reconciled',
      decision_id: decisionId,
      node_id: target.node_id,
      outcome: 'nothing',
    });
    return {
      outcome: {
        ...base,
        outcome: 'indeterminate',
        code: null,
        reason: 'reconciled: the node did nothing; trying the next candidate',
      },
      placement: null,
    };
  }
  ctx.store.putUnsettled({
    decision_id: decisionId,
    order_id: order.order_id,
    node_id: target.node_id,
    expected_instance_id: expectedInstanceId(order, target.node_id),
    variant,
    since_ms: ctx.now(),
    attempts: 1,
    last_error: s.reason.slice(0, 512),
    ram_mb: verified.body.resources.ram_mb,
    cpu_pct: verified.body.resources.cpu_pct,
  });
  extras.claim?.unsettled(decisionId);
  await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
    phase: 'unsettled',
    decision_id: decisionId,
    node_id: target.node_id,
    reason: s.reason.slice(0, 512),
  });
  return { outcome: { ...base, outcome: 'unsettled', code: null, reason: s.reason }, placement: null };
}

/** What a placement record takes from its package: its signers and artifacts, and its resources. */
export interface PlacedPackage {
  readonly signerKeys: readonly string[];
  readonly artifactHashes: readonly string[];
  readonly ramMb: number;
  readonly cpuPct: number;
}

/** The {@link PlacedPackage} of a verified package. */
export function placedPackage(verified: VerifiedWorkload<CogBody>): PlacedPackage {
  return {
    signerKeys: verified.signerKeys,
    artifactHashes: verified.artifactHashes,
    ramMb: verified.body.resources.ram_mb,
    cpuPct: verified.body.resources.cpu_pct,
  };
}

/** The {@link PlacedPackage} an order carries in the state (`package_facts`), or undefined. */
export function placedPackageOfOrder(order: OrderRecord): PlacedPackage | undefined {
  const f = order.package_facts;
  if (f === undefined) return undefined;
  return { signerKeys: f.signer_keys, artifactHashes: f.artifact_hashes, ramMb: f.ram_mb, cpuPct: f.cpu_pct };
}

/**
 * Records a placement a node reported (its instance view) and reserves its resources; returns the
 * staged lifecycle change (from `requested`) for the caller to chain once its transaction is done.
 */
export function record(
  ctx: PlaneContext,
  verified: PlacedPackage,
  order: OrderRecord,
  decisionId: string,
  nodeId: string,
  instance: InstanceView,
  extras: AttemptExtras = {},
): StagedChange {
  const now = ctx.now();
  const state = instance.state === 'running' ? 'running' : 'placed';
  const instanceId = instance.instance_id;
  const p: PlacementRecord = {
    instance_id: instanceId,
    node_id: nodeId,
    order_id: order.order_id,
    decision_id: decisionId,
    workload: order.workload,
    version: order.version,
    variant: instance.variant,
    runtime: instance.runtime,
    manifest_hash: order.manifest_hash,
    package_id: order.package_id,
    signer_keys: [...verified.signerKeys],
    artifact_hashes: [...verified.artifactHashes],
    state,
    desired_running: order.start,
    placed_at_ms: now,
    updated_at_ms: now,
    // A host derives instance ids from the workload, its config and the node: placed again on the
    // same node, a lost instance comes back under its own id (it replaces nothing).
    replaces: extras.replaces === undefined || extras.replaces === instanceId ? null : extras.replaces,
    reschedules: extras.reschedules ?? 0,
    // What the shared capacity check of every controller counts for it while it lives.
    ram_mb: verified.ramMb,
    cpu_pct: verified.cpuPct,
  };
  const staged =
    samePlacement(ctx, p) ?? stageNew(ctx, p, p.replaces === null ? 'placed' : `replaces ${p.replaces}`);
  ctx.reservations.hold({ ...p, identity: instanceIdentity(order) }, verified.ramMb, verified.cpuPct);
  return staged;
}

/**
 * A place answered with an instance the controller already knows (a place is idempotent on a host,
 * and instance ids are derived): a live one keeps its life and follows the answer; a lost one is back
 * (`lost` to its new state). Undefined for a new life (no record, or one that is gone for good).
 */
function samePlacement(ctx: PlaneContext, p: PlacementRecord): StagedChange | undefined {
  const held = ctx.store.getPlacement(p.instance_id);
  if (held === undefined || (isGone(held.state) && held.state !== 'lost')) return undefined;
  const to: PlacementState = held.state === 'lost' && p.state === 'placed' ? 'loaded' : p.state;
  // A live one was there all along (its node lists it); a lost one starts a new stay on its node.
  ctx.store.putPlacement({
    ...p,
    state: held.state,
    placed_at_ms: held.state === 'lost' ? p.placed_at_ms : held.placed_at_ms,
  });
  if (held.state === to || !canTransition(held.state, to))
    return stageState(ctx, p.instance_id, held.state, '');
  return stageState(
    ctx,
    p.instance_id,
    to,
    held.state === 'lost' ? 'placed again on its node' : 'placed again',
  );
}

/**
 * Records a place about to be sent as unsettled (on disk) and as in progress in this process (so a
 * settling pass leaves it to its attempt). `done` ends the in-process mark and keeps the record;
 * `clear` also removes the record (the answer said nothing happened there).
 */
function markInProgress(
  ctx: PlaneContext,
  order: OrderRecord,
  decisionId: string,
  nodeId: string,
  variant: string,
  verified: VerifiedWorkload<CogBody>,
  claim: PlaceClaim | undefined,
): { done(): void; clear(): void } {
  ctx.inProgress.add(decisionId);
  const record: UnsettledRecord = {
    decision_id: decisionId,
    order_id: order.order_id,
    node_id: nodeId,
    expected_instance_id: expectedInstanceId(order, nodeId),
    variant,
    since_ms: ctx.now(),
    attempts: 0,
    last_error: 'in progress: the place was sent and its answer is not recorded yet',
    ram_mb: verified.body.resources.ram_mb,
    cpu_pct: verified.body.resources.cpu_pct,
  };
  // The claim's row in the shared state gives way to the unsettled record, which holds the same room
  // until the place settles: written first, so the room is never dropped. With group commit both
  // writes join the group's one transaction already; without it (PostgreSQL) they are made one, so
  // the room is never counted twice either, and a durable commit is saved.
  const claimId = claim?.claimId;
  const send = (): void => {
    ctx.store.putUnsettled(record);
    if (claimId !== undefined) ctx.store.removePlaceClaim(claimId);
  };
  if (claimId === undefined || ctx.store.grouped !== undefined) send();
  else ctx.store.transaction(send);
  claim?.sent?.();
  return {
    done: () => {
      ctx.inProgress.delete(decisionId);
    },
    clear: () => {
      ctx.inProgress.delete(decisionId);
      ctx.store.removeUnsettled(decisionId);
    },
  };
}

/**
 * The package in `dir` as a source opened on its first use (a transport that fetches nothing, or a
 * host that holds the package already, costs no read of the envelope); `close` closes it when opened.
 */
function lazySource(dir: string, manifestHash: string): PackageSource & { close(): Promise<void> } {
  let opened: DirPackageSource | undefined;
  const open = (): DirPackageSource => {
    opened ??= DirPackageSource.open(dir);
    return opened;
  };
  return {
    manifestHash,
    manifest: async () => open().manifest(),
    pieceMap: async (path) => open().pieceMap(path),
    piece: async (path, index) => open().piece(path, index),
    close: async () => {
      await opened?.close();
    },
  };
}
