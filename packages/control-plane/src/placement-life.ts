import type { JsonValue } from '@heddle/envelope';
import {
  ChainKind,
  canTransition,
  isGone,
  LIFECYCLE_TRANSITIONS,
  LifecycleError,
  type LifecycleState,
  type LifecycleTransition,
  lifecyclePayload,
} from '@heddle/model';
import { type CogBody, readEnvelope } from '@heddle/package';
import { actorField } from './actor.js';
import { crossRef } from './cross-ref.js';
import { instanceIdentity } from './place-claims.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import { PLACEMENT_STATES, type PlacementRecord, type PlacementState } from './state-store.js';

// The one way a placement's state changes on the controller: checked against the lifecycle table of
// @heddle/model and chained (`workload.lifecycle`, side `controller`). A change is staged (written
// to the store, synchronously, so it can join a transaction) and then chained.

/** A staged change: the record as written and the transition to chain (none when the state did not change). */
export interface StagedChange {
  readonly placement: PlacementRecord;
  readonly transition: LifecycleTransition | undefined;
}

/** Fields a state change may set besides the state. */
export type PlacementPatch = Partial<
  Pick<PlacementRecord, 'desired_running' | 'replaces' | 'reschedules' | 'variant' | 'runtime'>
>;

/**
 * Writes `instanceId`'s move to `to` (with `patch`), reading its current state from the store. Staying
 * in the same state writes only the patch. Throws `LifecycleError` (`illegal_transition`) for a move
 * the table does not allow; nothing is written then. Reservations follow: released when it leaves
 * its node, held again when a lost one is adopted back.
 */
export function stageState(
  ctx: PlaneContext,
  instanceId: string,
  to: PlacementState,
  reason: string,
  patch: PlacementPatch = {},
): StagedChange {
  const p = ctx.store.getPlacement(instanceId);
  if (p === undefined) throw new LifecycleError(instanceId, 'requested', to);
  const now = ctx.now();
  if (p.state === to) {
    // cast: the patch's keys are PlacementRecord keys (PlacementPatch)
    const same = Object.entries(patch).every(([k, v]) => p[k as keyof PlacementRecord] === v);
    if (same) return { placement: p, transition: undefined };
    const next = { ...p, ...patch, updated_at_ms: now };
    ctx.store.putPlacement(next);
    return { placement: next, transition: undefined };
  }
  if (!canTransition(p.state, to)) throw new LifecycleError(instanceId, p.state, to);
  const next: PlacementRecord = { ...p, ...patch, state: to, updated_at_ms: now };
  ctx.store.putPlacement(next);
  if (isGone(to)) ctx.reservations.release(instanceId);
  else if (isGone(p.state)) holdReservation(ctx, next);
  return { placement: next, transition: { instance_id: instanceId, from: p.state, to, reason, at_ms: now } };
}

/** Stages a new placement (a place answered): the move from `requested` to its first state. */
export function stageNew(ctx: PlaneContext, p: PlacementRecord, reason: string): StagedChange {
  if (!canTransition('requested', p.state)) throw new LifecycleError(p.instance_id, 'requested', p.state);
  ctx.store.putPlacement(p);
  return {
    placement: p,
    transition: { instance_id: p.instance_id, from: 'requested', to: p.state, reason, at_ms: p.placed_at_ms },
  };
}

/**
 * Chains a staged change (`workload.lifecycle`, source `workload.placement`); nothing when unchanged.
 * A change of a placement whose decision is in another controller's chain carries `refers_to` naming it.
 */
export async function chainChange(
  ctx: PlaneContext,
  change: StagedChange,
  extra: { readonly [key: string]: JsonValue } = {},
): Promise<PlacementRecord> {
  const t = change.transition;
  if (t === undefined) return change.placement;
  const p = change.placement;
  await ctx.chain.append(
    PLANE_CHAIN_SOURCE,
    ChainKind.lifecycle,
    lifecyclePayload(t, 'controller', ctx.nodeId, {
      ...extra,
      // A placement another controller of the shared state placed: its decision is named (docs/chain.md).
      ...crossRef(ctx, p.decision_id),
      ...actorField(),
      order_id: p.order_id,
      decision_id: p.decision_id,
      node_id: p.node_id,
    }),
  );
  return p;
}

/** {@link stageState} then {@link chainChange}: the usual way to move a placement. */
export function setState(
  ctx: PlaneContext,
  instanceId: string,
  to: PlacementState,
  reason: string,
  patch: PlacementPatch = {},
  extra: { readonly [key: string]: JsonValue } = {},
): Promise<PlacementRecord> {
  return chainChange(ctx, stageState(ctx, instanceId, to, reason, patch), extra);
}

/** True for a placement that is still on its node as far as the controller knows (not gone). */
export function isLive(state: PlacementState): boolean {
  return !isGone(state);
}

const CONTROLLER_STATES: ReadonlySet<string> = new Set(PLACEMENT_STATES);

/**
 * The shortest sequence of legal moves from `from` to `to` through states the controller uses
 * (`to` itself excluded from the path's middle), or undefined when there is none. A host reports
 * where an instance is now; the states between are the ones it must have passed through.
 */
export function pathTo(from: PlacementState, to: PlacementState): PlacementState[] | undefined {
  if (from === to) return [];
  const prev = new Map<LifecycleState, LifecycleState>();
  const queue: LifecycleState[] = [from];
  while (queue.length > 0) {
    // cast: the loop runs while the queue is not empty
    const s = queue.shift() as LifecycleState;
    for (const n of LIFECYCLE_TRANSITIONS[s]) {
      if (prev.has(n) || n === from || !CONTROLLER_STATES.has(n)) continue;
      // Never pass through a state that means "gone" on the way somewhere else.
      if (n !== to && isGone(n)) continue;
      prev.set(n, s);
      if (n === to) {
        const path: PlacementState[] = [];
        // cast: every state on the path back was put in prev when it was reached
        for (let c: LifecycleState = to; c !== from; c = prev.get(c) as LifecycleState)
          path.unshift(c as PlacementState);
        return path;
      }
      queue.push(n);
    }
  }
  return undefined;
}

/**
 * Holds the resources of `p` again (read from its held package; Seeds and unreadable ones hold
 * nothing). `cache` keeps each package's resources by manifest hash across many calls (a restart).
 */
export function holdReservation(
  ctx: PlaneContext,
  p: PlacementRecord,
  cache: Map<string, { ram_mb: number; cpu_pct: number }> = new Map(),
): void {
  const r = resourcesOf(ctx, p.manifest_hash, cache);
  const order = ctx.store.getOrder(p.order_id);
  ctx.reservations.hold(
    { ...p, identity: order === undefined ? undefined : instanceIdentity(order) },
    r.ram_mb,
    r.cpu_pct,
  );
}

/**
 * The resources the held package `manifestHash` declares (zero for a Seed store pin or an unreadable
 * package), remembered in `cache`.
 */
export function resourcesOf(
  ctx: PlaneContext,
  manifestHash: string,
  cache: Map<string, { ram_mb: number; cpu_pct: number }> = new Map(),
): { ram_mb: number; cpu_pct: number } {
  let r = cache.get(manifestHash);
  if (r === undefined) {
    try {
      // cast: the package store holds cog packages only (verified as such when added)
      r = (readEnvelope(ctx.packages.pathOf(manifestHash)).body as CogBody).resources;
    } catch {
      r = { ram_mb: 0, cpu_pct: 0 };
    }
    cache.set(manifestHash, r);
  }
  return r;
}

/**
 * Moves `instanceId` to `to` along the shortest legal path (each step chained with `reason`): what a
 * host reports or a verb did, with the states it passed through. Throws `LifecycleError` when no
 * path leads there. `patch` is written with the last step.
 */
export async function moveTo(
  ctx: PlaneContext,
  instanceId: string,
  to: PlacementState,
  reason: string,
  patch: PlacementPatch = {},
  extra: { readonly [key: string]: JsonValue } = {},
): Promise<PlacementRecord> {
  const p = ctx.store.getPlacement(instanceId);
  if (p === undefined) throw new LifecycleError(instanceId, 'requested', to);
  const path = pathTo(p.state, to);
  if (path === undefined) throw new LifecycleError(instanceId, p.state, to);
  let last = p;
  for (const [i, s] of path.entries()) {
    last = await setState(ctx, instanceId, s, reason, i === path.length - 1 ? patch : {}, extra);
  }
  if (path.length === 0) last = await setState(ctx, instanceId, to, reason, patch, extra);
  return last;
}

/** True when `to` can be reached from `from` (or is where it is). */
export function canReach(from: PlacementState, to: PlacementState): boolean {
  return pathTo(from, to) !== undefined;
}
