import type { JsonObject, JsonValue } from '@heddle/envelope';
import { CallFailure, type CtlMethod } from '@heddle/protocol';
import { actorField } from './actor.js';
import { asObject } from './caller.js';
import { crossRef } from './cross-ref.js';
import { PlaneError } from './errors.js';
import { type ListedInstance, lifeOf } from './host-listing.js';
import type { InstanceVerb } from './node-driver.js';
import { canReach, isLive, moveTo, setState } from './placement-life.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { PlacementRecord, PlacementState, TargetRecord } from './state-store.js';

/** The placement with `instanceId`; `unknown_instance` otherwise. */
export function placementOf(ctx: PlaneContext, instanceId: string): PlacementRecord {
  const p = ctx.store.getPlacement(instanceId);
  if (p === undefined) {
    throw new PlaneError(
      'unknown_instance',
      `no instance ${instanceId} is known to this controller (see ps)`,
      {
        field: 'instance',
      },
    );
  }
  return p;
}

/** A call failure as a plane error (`refused` with the node's code, `unreachable`, `indeterminate`). */
export function planeFailure(err: unknown, what: string): PlaneError {
  if (err instanceof PlaneError) return err;
  if (err instanceof CallFailure) {
    const why = err.refusal === undefined ? err.message : `${err.refusal.code}: ${err.refusal.reason}`;
    return new PlaneError(err.code, `${what}: ${why}`, { cause: err });
  }
  return new PlaneError('unreachable', `${what}: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
  });
}

/**
 * Sends an instance verb to the node of `p` through its kind's driver; a mutation carries a chained
 * controller decision (with `why` in its payload).
 */
export async function sendVerb(
  ctx: PlaneContext,
  p: PlacementRecord,
  method: InstanceVerb,
  body: JsonObject,
  why: JsonObject = {},
): Promise<{ [key: string]: JsonValue }> {
  const target = ctx.book.get(p.node_id);
  let decisionId: string | undefined;
  if (method !== 'workload.status' && method !== 'workload.logs') {
    const event = await ctx.chain.append(PLANE_CHAIN_SOURCE, method, {
      ...why,
      ...crossRef(ctx, p.decision_id),
      ...actorField(),
      phase: 'decision',
      controller: ctx.nodeId,
      instance_id: p.instance_id,
      node_id: p.node_id,
    });
    decisionId = event.hash;
  }
  try {
    const answer = await ctx.drivers.of(target).verb(ctx, target, p, method, body, decisionId);
    ctx.book.contact(target.node_id);
    return answer;
  } catch (err) {
    if (decisionId !== undefined) {
      await ctx.chain.append(PLANE_CHAIN_SOURCE, method, {
        phase: 'failed',
        decision_id: decisionId,
        instance_id: p.instance_id,
        node_id: p.node_id,
        reason: (err instanceof Error ? err.message : String(err)).slice(0, 512),
      });
    }
    throw planeFailure(err, `${method} ${p.instance_id} on ${p.node_id}`);
  }
}

/**
 * An instance verb to a `heddle-host` (the host driver's): one signed call, the answer's `result`.
 * Rejects with the wire's `CallFailure`.
 */
export async function callHostVerb(
  ctx: PlaneContext,
  target: TargetRecord,
  method: InstanceVerb,
  body: JsonObject,
  decisionId: string | undefined,
): Promise<{ [key: string]: JsonValue }> {
  const r = await ctx.caller.call({
    url: target.url,
    target: target.node_id,
    method,
    body,
    expectedKey: target.public_key,
    ...(decisionId === undefined ? {} : { decisionId }),
  });
  return asObject(r.result);
}

/** Refuses (`invalid_input`) a verb that would move `p` where its lifecycle cannot go. */
function checkMove(p: PlacementRecord, to: PlacementState, verb: string): void {
  if (canReach(p.state, to)) return;
  throw new PlaneError(
    'invalid_input',
    `instance ${p.instance_id} is ${p.state}: it cannot be ${verb} (see docs/lifecycle.md)`,
    { field: 'instance' },
  );
}

/** `workload.start` of a placed instance (`reason` is chained with the move to `running`). */
export async function startInstance(
  ctx: PlaneContext,
  instanceId: string,
  reason = 'started by the operator',
): Promise<PlacementRecord> {
  const p = placementOf(ctx, instanceId);
  checkMove(p, 'running', 'started');
  await sendVerb(ctx, p, 'workload.start', { instance_id: instanceId });
  return moveTo(ctx, instanceId, 'running', reason, { desired_running: true });
}

/** `workload.stop` of a placed instance; returns the placement and the node's evidence. */
export async function stopInstance(
  ctx: PlaneContext,
  instanceId: string,
  graceMs?: number,
  reason = 'stopped by the operator',
): Promise<{ placement: PlacementRecord; evidence: JsonValue }> {
  const p = placementOf(ctx, instanceId);
  checkMove(p, 'stopped', 'stopped');
  const r = await sendVerb(ctx, p, 'workload.stop', {
    instance_id: instanceId,
    ...(graceMs === undefined ? {} : { grace_ms: graceMs }),
  });
  const placement = await moveTo(ctx, instanceId, 'stopped', reason, { desired_running: false });
  return { placement, evidence: r.evidence ?? null };
}

/** `workload.unload` of a placed instance: the record is kept as `unloaded`, its reservation released. */
export async function unloadInstance(
  ctx: PlaneContext,
  instanceId: string,
  reason = 'unloaded by the operator',
): Promise<PlacementRecord> {
  const p = placementOf(ctx, instanceId);
  checkMove(p, 'unloaded', 'unloaded');
  await sendVerb(ctx, p, 'workload.unload', { instance_id: instanceId });
  ctx.reservations.release(instanceId);
  return setState(ctx, instanceId, 'unloaded', reason, { desired_running: false });
}

/** The node's status of a placed instance (the placement follows the state the node reports). */
export async function instanceStatus(
  ctx: PlaneContext,
  instanceId: string,
): Promise<{ placement: PlacementRecord; node: JsonValue }> {
  const p = placementOf(ctx, instanceId);
  const r = await sendVerb(ctx, p, 'workload.status', { instance_id: instanceId });
  const remote = asObject(r.instance ?? null);
  const mode = asObject(remote.mode ?? null);
  const life = lifeOf({
    // cast: lifeOf checks the value against the placement states
    life: typeof remote.life === 'string' ? (remote.life as ListedInstance['life']) : null,
    state: typeof remote.state === 'string' ? remote.state : 'unknown',
    mode: typeof mode.type === 'string' ? mode.type : null,
  });
  // Only a live placement follows its node; one the controller gave up on is left to the tick.
  let next = placementOf(ctx, instanceId);
  if (life !== undefined && isLive(next.state) && isLive(life) && canReach(next.state, life))
    next = await moveTo(ctx, instanceId, life, 'reported by its node');
  return { placement: next, node: remote };
}

/** The last `lines` lines of a placed instance's output. */
export async function instanceLogs(
  ctx: PlaneContext,
  instanceId: string,
  lines = 100,
): Promise<{ instance_id: string; lines: string[]; truncated: boolean }> {
  const p = placementOf(ctx, instanceId);
  const r = await sendVerb(ctx, p, 'workload.logs', { instance_id: instanceId, lines });
  const out = Array.isArray(r.lines) ? r.lines.filter((l): l is string => typeof l === 'string') : [];
  return { instance_id: instanceId, lines: out, truncated: r.truncated === true };
}
