import type { JsonValue } from '@heddle/envelope';
import type { Decision as GateDecision } from '@heddle/gate';
import type { Decision, Explanation, GovernanceVerdict, PlacedDecision } from '@heddle/placement';
import { actorField } from './actor.js';
import { PlaneError } from './errors.js';
import type { PackageAttempt } from './node-driver.js';
import type { AttemptOutcome, PlaceResult } from './place.js';
import type { Attempt } from './place-attempt.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { OrderRecord, PlacementRecord } from './state-store.js';

// What every placing flow shares (the package flow in place.ts, and a driver's own, such as the Seed
// store-pin flow of @heddle/seed-adapter/controller): how a decision is judged, chained and
// dispatched, and how each attempt and the final failure are reported.

/** The gate's dry-run decision as the engine's governance verdict. */
export function verdictOf(d: GateDecision): GovernanceVerdict {
  if (d.verdict === 'permit') return { verdict: 'permit' };
  if (d.verdict === 'defer') return { verdict: 'defer', reason: d.reason };
  return { verdict: 'deny', reason: d.reason, rule: d.rule };
}

/**
 * An unplaceable decision as the error naming every node's reason (each reason once): those the engine
 * rejected, those left out (`taken`), and those the shared state found without room (`full`).
 */
export function unplaceable(
  decision: Exclude<Decision, PlacedDecision>,
  label: string,
  taken: ReadonlyMap<string, string> = new Map(),
  full: ReadonlyMap<string, string> = new Map(),
): PlaneError {
  const reasons: Record<string, string> = Object.fromEntries(taken);
  for (const [id, why] of full) reasons[id] = why;
  for (const r of decision.rejected)
    reasons[r.node_id] = [...new Set(r.failures.map((f) => f.detail))].join('; ');
  const why = decision.outcome === 'pin_refused' ? decision.error.message : decision.reason;
  const left =
    taken.size === 0
      ? ''
      : ` (${taken.size} node(s) left out: they hold or are placing the identical instance for another order)`;
  const noRoom =
    full.size === 0
      ? ''
      : ` (${full.size} node(s) have no room in the shared state: places of other controllers took it)`;
  return new PlaneError('unplaceable', `${label}: ${why}${left}${noRoom}`, { reasons });
}

/** Chains a placement decision (source `workload.placement`); its hash is the decision id. */
export async function chainDecision(
  ctx: PlaneContext,
  order: OrderRecord,
  decision: PlacedDecision,
  variant: string,
  extra: { readonly [key: string]: JsonValue } = {},
): Promise<string> {
  const event = await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
    ...extra,
    ...actorField(),
    phase: 'decision',
    controller: ctx.nodeId,
    order_id: order.order_id,
    workload: order.workload,
    version: order.version,
    package_id: order.package_id,
    manifest_hash: order.manifest_hash,
    node_id: decision.node_id,
    variant,
    candidates: decision.candidates.map((c) => c.node_id),
    rejected: decision.rejected.length,
    pinned: decision.pinned,
  });
  return event.hash;
}

/** Chains one attempt's outcome and returns it with its placement. */
export async function chainAttempt(
  ctx: PlaneContext,
  decisionId: string,
  order: OrderRecord,
  outcome: AttemptOutcome,
  placement: PlacementRecord | null,
): Promise<Attempt> {
  await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
    phase: 'attempt',
    decision_id: decisionId,
    order_id: order.order_id,
    ...outcome,
    instance_id: placement?.instance_id ?? null,
  });
  return { outcome, placement };
}

/**
 * Dispatches to the ranked candidates (at most `maxAttempts`, only the pin when pinned) until one
 * places or leaves the decision unsettled; when none does, the order is dropped (the decision and
 * every attempt are on the chain; `keepOrder` keeps a stored order that is placed again later) and
 * `refused` names each node's outcome.
 */
export async function dispatchRanked<C extends { readonly node_id: string }>(
  ctx: PlaneContext,
  order: OrderRecord,
  decisionId: string,
  ranked: readonly C[],
  pinned: boolean,
  explanation: Explanation,
  attempt: (candidate: C, index: number) => Promise<Attempt>,
  options: { readonly keepOrder?: boolean } = {},
): Promise<PlaceResult> {
  const attempts: AttemptOutcome[] = [];
  const base = { order_id: order.order_id, decision_id: decisionId, explanation };
  for (const [i, c] of ranked.slice(0, pinned ? 1 : ctx.config.maxAttempts).entries()) {
    const a = await attempt(c, i);
    attempts.push(a.outcome);
    if (a.outcome.outcome === 'placed') return { ...base, status: 'placed', instance: a.placement, attempts };
    if (a.outcome.outcome === 'unsettled') return { ...base, status: 'unsettled', instance: null, attempts };
  }
  if (options.keepOrder !== true) ctx.store.removeOrder(order.order_id);
  const reasons: Record<string, string> = {};
  for (const a of attempts)
    reasons[a.node_id] = `${a.outcome}${a.code === null ? '' : ` ${a.code}`}: ${a.reason ?? ''}`;
  throw new PlaneError('refused', `${order.workload}: every candidate failed (${attempts.length} tried)`, {
    reasons,
  });
}

/**
 * Places a package on one node through its kind's driver (`NodeDriver.placePackage`); a kind that
 * takes no packages is a `refused` attempt (code `no_driver`), chained.
 */
export async function attemptOn(ctx: PlaneContext, a: PackageAttempt): Promise<Attempt> {
  const driver = ctx.drivers.find(ctx.book.get(a.nodeId));
  if (driver?.placePackage === undefined) {
    return chainAttempt(
      ctx,
      a.decisionId,
      a.order,
      {
        node_id: a.nodeId,
        variant: a.variant,
        outcome: 'refused',
        code: 'no_driver',
        reason: `node ${a.nodeId} is of a kind whose driver here takes no packages`,
      },
      null,
    );
  }
  return driver.placePackage(ctx, a);
}

/** A dry run's result: decided and explained, nothing chained or placed. */
export function dryRun(explanation: Explanation): PlaceResult {
  return { status: 'dry_run', order_id: null, decision_id: null, instance: null, attempts: [], explanation };
}
