import { isGone } from '@heddle/model';
import type { CogBody, VerifiedWorkload } from '@heddle/package';
import {
  cogPlacementRequest,
  type Decision,
  type Explanation,
  explainJson,
  type GovernanceVerdict,
  type PlacedDecision,
  place,
  type ScoredCandidate,
} from '@heddle/placement';
import { type ApprovalGrant, grantCovers } from './approvals.js';
import type { TransferProgress } from './caller.js';
import { crossRef } from './cross-ref.js';
import { PlaneError } from './errors.js';
import type { HeldPlaceRecord } from './held-places.js';
import { withIdempotencyKey } from './idempotency.js';
import { orderRecord, type PlaceOrderInput } from './order.js';
import type { Attempt } from './place-attempt.js';
import { claimSpec, duplicateInstance, expectedInstanceId, takenNodes } from './place-claims.js';
import {
  attemptOn,
  chainAttempt,
  chainDecision,
  dispatchRanked,
  dryRun,
  unplaceable,
} from './place-common.js';
import { dryRunChecks, packageChecks } from './place-gate.js';
import type { PlaneContext } from './plane-context.js';
import type { PlaceClaim } from './reservations.js';
import { claimShared } from './shared-capacity.js';
import type { OrderRecord, PlacementRecord } from './state-store.js';

/**
 * How one dispatch to a node ended; `skipped`: a fallback candidate was not sent the place, since
 * places decided meanwhile took its room or its identical instance (code `claimed`).
 */
export type AttemptOutcomeKind =
  | 'placed'
  | 'refused'
  | 'unreachable'
  | 'indeterminate'
  | 'gate_denied'
  | 'unsettled'
  | 'skipped';

/** One dispatch to a node, as chained and reported. */
export interface AttemptOutcome {
  readonly node_id: string;
  readonly variant: string;
  readonly outcome: AttemptOutcomeKind;
  /** The refusal code, or the gate's rule. */
  readonly code: string | null;
  readonly reason: string | null;
}

/** What a place did. */
export interface PlaceResult {
  /**
   * `placed`; `dry_run` (decided, nothing chained or placed); `unsettled` (a lost answer could not be
   * reconciled yet); `awaiting_approval` (the policy defers it: held under `approval_id` until an
   * operator approves or rejects it, or it expires; see `ControlPlane.approve`).
   */
  readonly status: 'placed' | 'dry_run' | 'unsettled' | 'awaiting_approval';
  /** The approval request holding the place (status `awaiting_approval` only). */
  readonly approval_id?: string;
  readonly order_id: string | null;
  /** The chain hash of the decision (null for a dry run). */
  readonly decision_id: string | null;
  readonly instance: PlacementRecord | null;
  readonly attempts: readonly AttemptOutcome[];
  /** The engine's decision, explained. */
  readonly explanation: Explanation;
  /**
   * True when this answer is a retry's (the same idempotency key): what the key's order became; no
   * new order was made. Absent otherwise.
   */
  readonly replayed?: boolean;
}

/** Hooks of a place. */
export interface PlaceHooks {
  /** Told of the package transfer to each node. */
  readonly onProgress?: (p: TransferProgress) => void;
  /**
   * The operator's request id (`x-request-id`): carried in the place body to each host that
   * advertises the `request_id` feature, so the host's log names it. Never stored or chained.
   */
  readonly requestId?: string;
  /**
   * Nodes the engine must not choose, each with why (a job's constraints the engine does not know:
   * arch, runtime, tier); they are left out of the view like nodes holding the identical instance.
   */
  readonly exclude?: ReadonlyMap<string, string>;
  /**
   * False: a place the policy defers is refused (`unplaceable`, naming the defer) instead of held
   * under an approval request (a job's reconciler places again on its own; it must not queue requests).
   */
  readonly hold?: boolean;
}

/**
 * Places an order (docs/placement.md), already parsed at the operator's boundary (`parseOrder`): verifies the package against the controller's anchors
 * and revocations (and holds a copy); runs the engine on the view, with the gate's verdict for
 * `workload.place` at each node's tier; chains the decision (its hash is the decision id); then
 * dispatches to the winner and, when that fails safely, to the other candidates in rank order (a pin
 * goes only to its node), each after a chained gate check and each attempt chained. A lost answer is
 * reconciled with that node before anything else is tried; one that cannot be is kept unsettled. With
 * an `idempotency_key`, a retry answers with the order the key made (see `withIdempotencyKey`).
 */
export async function placeOrder(
  ctx: PlaneContext,
  order: PlaceOrderInput,
  hooks: PlaceHooks = {},
): Promise<PlaceResult> {
  if (order.node !== undefined) ctx.book.get(order.node);
  const run = (): Promise<PlaceResult> =>
    withIdempotencyKey(ctx, order, (orderId) => placeParsed(ctx, order, orderId, hooks));
  const store = ctx.store;
  // Group commit (docs/architecture.md): the package flow's writes share one durable transaction with
  // the other places in flight; each waits for it before a place leaves (see attemptPackage) and
  // before it answers. A driver's own flow (a store pin) keeps its writes durable as they return.
  if (store.grouped === undefined || ctx.drivers.ownerOf(order) !== undefined) return run();
  return store.grouped(async () => {
    try {
      return await run();
    } finally {
      await store.durable?.();
    }
  });
}

async function placeParsed(
  ctx: PlaneContext,
  order: PlaceOrderInput,
  orderId: string | undefined,
  hooks: PlaceHooks,
): Promise<PlaceResult> {
  const owner = ctx.drivers.ownerOf(order);
  if (owner?.placeOrder !== undefined) return owner.placeOrder(ctx, order, orderId);
  const verified =
    order.package_dir !== undefined
      ? await ctx.packages.add(order.package_dir)
      : order.manifest_hash !== undefined
        ? await ctx.packages.get(order.manifest_hash)
        : noPlacer(ctx);
  return placeVerified(ctx, verified, order, orderId, hooks, undefined);
}

/**
 * Places a held order whose approval permits it (see `PlaneApprovals.approve`): the same path as a
 * place (the engine on the current view, a chained decision naming the approval, ranked attempts),
 * where the approved gate check (its action and exact context) counts as permitted without a new
 * request, and every other check is asked as usual.
 */
export async function placeApproved(
  ctx: PlaneContext,
  held: HeldPlaceRecord,
  grant: ApprovalGrant,
): Promise<PlaceResult> {
  const verified = await ctx.packages.get(held.manifest_hash);
  return placeVerified(ctx, verified, held.order, held.reserved_order_id ?? undefined, {}, grant);
}

async function placeVerified(
  ctx: PlaneContext,
  verified: VerifiedWorkload<CogBody>,
  order: PlaceOrderInput,
  orderId: string | undefined,
  hooks: PlaceHooks,
  grant: ApprovalGrant | undefined,
): Promise<PlaceResult> {
  const now = ctx.now();
  const record = orderRecord(
    order,
    {
      workload: verified.body.id,
      version: verified.body.version,
      manifest_hash: verified.manifestHash,
      package_id: verified.packageId,
    },
    now,
    orderId,
    {
      signer_keys: [...verified.signerKeys],
      artifact_hashes: [...verified.artifactHashes],
      ram_mb: verified.body.resources.ram_mb,
      cpu_pct: verified.body.resources.cpu_pct,
    },
  );
  const taken = takenNodes(ctx, record);
  for (const [id, why] of hooks.exclude ?? []) if (!taken.has(id)) taken.set(id, why);
  const pinnedWhy = record.node === null ? undefined : taken.get(record.node);
  if (record.node !== null && pinnedWhy !== undefined)
    throw duplicateInstance(record, record.node, pinnedWhy);
  const full = new Map<string, string>();
  const { decision, claim } = decideClaimed(
    ctx,
    verified,
    record,
    now,
    taken,
    full,
    grant,
    order.dry_run === true,
  );
  const explanation = explainJson(decision);
  if (order.dry_run === true) return dryRun(explanation);
  if (decision.outcome !== 'placed' || claim === undefined) {
    const held =
      grant === undefined && hooks.hold !== false && decision.outcome !== 'placed'
        ? await holdForApproval(
            ctx,
            verified,
            record,
            order,
            orderId,
            now,
            excluding(taken, full),
            explanation,
          )
        : undefined;
    if (held !== undefined) return held;
    throw unplaceable(notPlaced(decision), verified.body.id, taken, full);
  }
  try {
    const extra = grant === undefined ? {} : { approval_id: grant.approval_id, approval_event: grant.event };
    const decisionId = await chainDecision(ctx, record, decision, decision.variant, extra);
    ctx.store.putOrder(record);
    return await dispatchRanked(
      ctx,
      record,
      decisionId,
      ranked(decision),
      decision.pinned,
      explanation,
      (c, i) =>
        claimed(ctx, claim, record, decisionId, c, i, () =>
          attemptOn(ctx, {
            verified,
            order: record,
            decisionId,
            nodeId: c.node_id,
            variant: c.variant,
            emulated: c.execution === 'emulated',
            hooks,
            extras: grant === undefined ? { claim } : { claim, approved: grant },
          }),
        ),
    );
  } finally {
    claim.release();
  }
}

/**
 * When the controller keeps an approval queue and the only thing between the order and a node is a
 * defer of the policy: the engine decides again with deferred checks counted as permitted; its
 * winner's check is asked of the gate for real (chained, queued); a defer holds the order under the
 * approval request (durably) and answers `awaiting_approval`. Undefined when nothing can be held
 * (no queue, no node would take it even so, or the gate no longer defers).
 */
async function holdForApproval(
  ctx: PlaneContext,
  verified: VerifiedWorkload<CogBody>,
  record: OrderRecord,
  order: PlaceOrderInput,
  orderId: string | undefined,
  now: number,
  taken: ReadonlyMap<string, string>,
  explanation: Explanation,
): Promise<PlaceResult | undefined> {
  const approvals = ctx.approvals;
  if (approvals === undefined) return undefined;
  const relaxed = decide(ctx, verified, record, now, taken, undefined, true);
  if (relaxed.outcome !== 'placed') return undefined;
  const node = ctx.view.node(relaxed.node_id, now);
  if (node === undefined) return undefined;
  const checks = packageChecks(verified, relaxed.variant, node, relaxed.execution === 'emulated');
  const deferred = checks.filter((c) => dryRunChecks(ctx, [c]).verdict !== 'permit');
  const check = deferred[0];
  if (check === undefined || deferred.length !== 1) return undefined;
  const d = await ctx.gate.check(ctx.nodeId, check.action, check.context);
  if (d.verdict !== 'defer' || d.approval === undefined) return undefined;
  const { package_dir: _dir, ...rest } = order;
  await approvals.hold({
    approval_id: d.approval.id,
    order: { ...rest, manifest_hash: verified.manifestHash },
    reserved_order_id: orderId ?? null,
    workload: verified.body.id,
    version: verified.body.version,
    manifest_hash: verified.manifestHash,
    node_id: relaxed.node_id,
    variant: relaxed.variant,
    action: check.action,
    context: check.context,
    status: 'held',
    order_id: null,
    instance_id: null,
    detail: null,
  });
  return {
    status: 'awaiting_approval',
    approval_id: d.approval.id,
    order_id: null,
    decision_id: null,
    instance: null,
    attempts: [],
    explanation,
  };
}

/** An order only a driver places (a store pin), when no registered driver places it. */
function noPlacer(ctx: PlaneContext): never {
  throw new PlaneError(
    'no_driver',
    `order store_pin: no node driver of this controller places store pins (it drives: ${ctx.drivers.kinds().join(', ')})`,
    { field: 'store_pin' },
  );
}

/** What {@link decideClaimed} found: a placed decision with its claim, or a decision that placed nothing. */
interface ClaimedDecision {
  readonly decision: Decision;
  /** The claim on the winner (absent when nothing placed, or for a dry run). */
  readonly claim?: PlaceClaim;
}

/**
 * The engine's decision for `order`, its winner claimed (see `claimShared`): in this controller's
 * reservations and, as the authority, in the shared state. Claimed from the decision on (synchronously,
 * before anything is awaited), so that concurrent decisions see this place's resources and instance
 * (issue 15 items 8 and 9). A winner the shared state finds without room (other controllers' places
 * took it) is added to `full` and the engine decides again without it; a pinned order's node is not
 * replaced: nothing placed (the decision as the engine gave it, the node in `full`). A dry run claims
 * nothing.
 */
function decideClaimed(
  ctx: PlaneContext,
  verified: VerifiedWorkload<CogBody>,
  order: OrderRecord,
  now: number,
  taken: ReadonlyMap<string, string>,
  full: Map<string, string>,
  grant?: ApprovalGrant,
  dry = false,
): ClaimedDecision {
  for (;;) {
    const decision = decide(ctx, verified, order, now, excluding(taken, full), grant);
    if (dry || decision.outcome !== 'placed') return { decision };
    const target = { node_id: decision.node_id, instance_id: expectedInstanceId(order, decision.node_id) };
    const view = ctx.view.view(now);
    const claim = claimShared(ctx, target, claimSpec(order, verified.body.resources), view);
    if (typeof claim !== 'string') return { decision, claim };
    full.set(decision.node_id, claim);
    if (decision.pinned) return { decision };
  }
}

/** `taken` and `full` together: the nodes the engine must leave out. */
function excluding(
  taken: ReadonlyMap<string, string>,
  full: ReadonlyMap<string, string>,
): Map<string, string> {
  const out = new Map(taken);
  for (const [id, why] of full) if (!out.has(id)) out.set(id, why);
  return out;
}

/**
 * A decision that did not place, for the refusal: a placed one (a pinned winner the shared state found
 * without room) becomes `unplaceable` naming the node (its reason is in `full`).
 */
function notPlaced(decision: Decision): Exclude<Decision, PlacedDecision> {
  if (decision.outcome !== 'placed') return decision;
  return {
    ...decision,
    outcome: 'unplaceable',
    reason: `pinned node ${decision.node_id} has no room in the shared state`,
    rejected: [],
  };
}

/**
 * Runs `run` (the attempt on candidate `c`, the `index`th) once the claim holds there: the winner is
 * already claimed; a fallback candidate is claimed now, and skipped (chained, outcome `skipped`) when
 * places decided since took its room or its instance.
 */
async function claimed(
  ctx: PlaneContext,
  claim: PlaceClaim,
  order: OrderRecord,
  decisionId: string,
  c: Pick<ScoredCandidate, 'node_id' | 'variant'>,
  index: number,
  run: () => Promise<Attempt>,
): Promise<Attempt> {
  if (index > 0) {
    const target = { node_id: c.node_id, instance_id: expectedInstanceId(order, c.node_id) };
    const held = ctx.store.getPlacement(target.instance_id);
    const why =
      held !== undefined && !isGone(held.state)
        ? `already holds the identical instance ${target.instance_id} (order ${held.order_id})`
        : claim.move(target, ctx.view.view(ctx.now()));
    if (why !== undefined) {
      return chainAttempt(
        ctx,
        decisionId,
        order,
        { node_id: c.node_id, variant: c.variant, outcome: 'skipped', code: 'claimed', reason: why },
        null,
      );
    }
  }
  return run();
}

/** How a stored order is placed again to replace a lost instance (a reschedule). */
export interface ReplaceOptions {
  /** The lost instance the new one replaces. */
  readonly replaces: string;
  /** The reschedule count the new instance carries in its lineage. */
  readonly reschedules: number;
  /** Nodes to avoid besides the order's own (dead ones). */
  readonly avoid: readonly string[];
  /** Timeout of each `place` (the reschedule timeout). */
  readonly timeoutMs: number;
  /**
   * Told the decision id once it is chained and before any place is sent (synchronously), so the
   * caller can record it durably first: a controller that dies while the place is out must settle that
   * decision at its next start, never decide the reschedule again.
   */
  readonly onDecision?: (decisionId: string) => void;
}

/**
 * Places a stored order again (a reschedule, docs/lifecycle.md): the same path as {@link placeOrder} (the held
 * package verified again, the engine with the gate's verdicts, a chained decision, ranked attempts
 * with their own gate checks, a lost answer reconciled before anything else) with `options.avoid`
 * added to the order's avoid list, each place bounded by `options.timeoutMs`, and the new placement
 * recording the instance it replaces. The stored order is kept when no node takes it (the reschedule
 * is retried later). Refuses with `unplaceable` (no node fits) or `refused` (every candidate failed).
 */
export async function placeStoredOrder(
  ctx: PlaneContext,
  order: OrderRecord,
  options: ReplaceOptions,
): Promise<PlaceResult> {
  const verified = await ctx.packages.get(order.manifest_hash);
  const wanted: OrderRecord = {
    ...order,
    start: true,
    avoid: [...new Set([...order.avoid, ...options.avoid])],
  };
  const taken = takenNodes(ctx, wanted);
  const full = new Map<string, string>();
  const { decision, claim } = decideClaimed(ctx, verified, wanted, ctx.now(), taken, full);
  const explanation = explainJson(decision);
  if (decision.outcome !== 'placed' || claim === undefined)
    throw unplaceable(notPlaced(decision), verified.body.id, taken, full);
  try {
    const decisionId = await chainDecision(ctx, wanted, decision, decision.variant, {
      reschedule_of: options.replaces,
      reschedules: options.reschedules,
      // The lost instance may have been placed by another controller of the same database.
      ...crossRef(ctx, ctx.store.getPlacement(options.replaces)?.decision_id),
    });
    options.onDecision?.(decisionId);
    const extras = {
      timeoutMs: options.timeoutMs,
      replaces: options.replaces,
      reschedules: options.reschedules,
      claim,
    };
    return await dispatchRanked(
      ctx,
      wanted,
      decisionId,
      ranked(decision),
      decision.pinned,
      explanation,
      (c, i) =>
        claimed(ctx, claim, wanted, decisionId, c, i, () =>
          attemptOn(ctx, {
            verified,
            order: wanted,
            decisionId,
            nodeId: c.node_id,
            variant: c.variant,
            emulated: c.execution === 'emulated',
            hooks: {},
            extras,
          }),
        ),
      { keepOrder: true },
    );
  } finally {
    claim.release();
  }
}

/** The winner first, then the other candidates in rank order. */
function ranked(decision: PlacedDecision): Pick<ScoredCandidate, 'node_id' | 'variant' | 'execution'>[] {
  return [
    { node_id: decision.node_id, variant: decision.variant, execution: decision.execution },
    ...decision.candidates.filter((c) => c.node_id !== decision.node_id),
  ];
}

/**
 * The engine's decision for `order`; with `grant`, the approved check counts as permitted; with
 * `deferAsPermit`, every deferred check does (the decision a held place is asked for).
 */
function decide(
  ctx: PlaneContext,
  verified: VerifiedWorkload<CogBody>,
  order: OrderRecord,
  now: number,
  taken: ReadonlyMap<string, string>,
  grant?: ApprovalGrant,
  deferAsPermit = false,
): Decision {
  const view = ctx.view.viewExcluding(now, taken);
  const request = cogPlacementRequest(verified.body, {
    workload: verified.body.id,
    package_id: verified.packageId,
    allow_emulation: order.allow_emulated,
    ...(order.node === null ? {} : { pin: order.node }),
    ...(order.prefer.length === 0 ? {} : { prefer: order.prefer.map((node_id) => ({ node_id })) }),
    ...(order.avoid.length === 0 ? {} : { avoid: order.avoid.map((node_id) => ({ node_id })) }),
    ...(order.constraints === undefined || order.constraints.length === 0
      ? {}
      : { constraints: order.constraints.map((c) => ({ label: c.label, value: c.value })) }),
    ...(order.spread === undefined || order.spread === null ? {} : { spread: { label: order.spread } }),
  });
  // The same checks, with the same contexts, as each attempt asks of the gate (emulated included).
  // A check's context depends on the node only through its tier and memory: within one decision the
  // verdict of each (variant, execution, tier, memory) is asked once.
  const verdicts = new Map<string, GovernanceVerdict>();
  return place(request, view, ctx.reservations.state, {
    now_ms: now,
    governance: (_id, variant, node): GovernanceVerdict => {
      const emulated = variant.execution === 'emulated';
      const key = `${variant.name}\n${emulated}\n${node.tier}\n${node.memory_mb}`;
      let v = verdicts.get(key);
      if (v === undefined) {
        const checks = packageChecks(verified, variant.name, node, emulated);
        const open =
          grant === undefined ? checks : checks.filter((c) => !grantCovers(grant, c.action, c.context));
        v = dryRunChecks(ctx, open);
        verdicts.set(key, v);
      }
      return deferAsPermit && v.verdict === 'defer' ? { verdict: 'permit' } : v;
    },
  });
}
