import { canonicalJson } from '@heddle/envelope';
import { ChainKind, isGone } from '@heddle/model';
import { PackageError, RevocationList, type RevocationListFile, type TrustAnchors } from '@heddle/package';
import { CallFailure } from '@heddle/protocol';
import { actorField } from './actor.js';
import { PlaneError } from './errors.js';
import { nodeKind } from './node-drivers.js';
import { setState } from './placement-life.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import { backoffMs, revokedBy } from './reschedule.js';
import type { TargetRecord } from './state-store.js';

/** The host method that takes a revocation list (docs/protocol.md §14). */
export const REVOKE_METHOD = 'workload.revoke' as const;

/** How one node took a pushed list. */
export interface RevocationNodeResult {
  readonly node_id: string;
  /** `applied` (it took this generation now), `held` (it already held it), `failed` (with the reason), `skipped` (unreachable, backing off, or of a kind that takes no list). */
  readonly outcome: 'applied' | 'held' | 'failed' | 'skipped';
  /** The generation it acknowledged (0 when none). */
  readonly generation: number;
  /** Instances it tore down. */
  readonly torn_down: readonly string[];
  readonly reason: string | null;
}

/** What {@link applyRevocations} did. */
export interface RevocationPushReport {
  readonly generation: number;
  /** Placements marked revoked on the controller. */
  readonly revoked: readonly string[];
  readonly nodes: readonly RevocationNodeResult[];
}

/**
 * The controller's held list (verified again, cached by generation): what is pushed and what
 * placements are checked against.
 */
export class HeldRevocations {
  #cached: RevocationList | undefined;
  readonly #anchors: TrustAnchors;
  /** Nodes whose last push failed: when they are tried again (10 s doubling to 5 min). */
  readonly #retry = new Map<string, { attempts: number; nextAtMs: number }>();

  constructor(anchors: TrustAnchors) {
    this.#anchors = anchors;
  }

  /** Checks a signed list against the controller's operator keys; `invalid_input` naming the field. */
  verify(file: unknown): RevocationList {
    try {
      return RevocationList.parse(JSON.stringify(file ?? null), {
        trustedKeys: this.#anchors.operatorKeys(),
      });
    } catch (err) {
      const field = err instanceof PackageError && err.field !== undefined ? `list.${err.field}` : 'list';
      throw new PlaneError(
        'invalid_input',
        `revocation list: ${err instanceof Error ? err.message : String(err)}`,
        {
          field,
          cause: err,
        },
      );
    }
  }

  /** True when a push to `nodeId` is due (it never failed, or its backoff has passed). */
  due(nodeId: string, nowMs: number): boolean {
    return (this.#retry.get(nodeId)?.nextAtMs ?? 0) <= nowMs;
  }

  /** Records the outcome of a push to `nodeId` (a failure backs off). */
  settled(ctx: Pick<PlaneContext, 'config' | 'now'>, nodeId: string, ok: boolean): void {
    if (ok) {
      this.#retry.delete(nodeId);
      return;
    }
    const attempts = (this.#retry.get(nodeId)?.attempts ?? 0) + 1;
    this.#retry.set(nodeId, { attempts, nextAtMs: ctx.now() + backoffMs(ctx, attempts) });
  }

  /** Forgets every backoff (a new generation is pushed to everyone now). */
  reset(): void {
    this.#retry.clear();
  }

  /** The held list, or undefined when the controller holds none. */
  current(ctx: PlaneContext): RevocationList | undefined {
    const held = ctx.store.getRevocationList();
    if (held === undefined) return undefined;
    if (this.#cached?.generation !== held.generation) this.#cached = this.verify(held.list);
    return this.#cached;
  }
}

/**
 * Takes a signed revocation list (docs/trust-and-revocation.md): verified against the controller's operator keys, a
 * generation below the held one (or the held generation with other entries) refused (`invalid_input`,
 * field `list.generation`), stored; every
 * placement it names is marked `revoked` at once (chained; a lost one is not rescheduled); then pushed
 * to every reachable host behind it (see {@link pushBehind}).
 */
export async function applyRevocations(
  ctx: PlaneContext,
  held: HeldRevocations,
  file: RevocationListFile,
): Promise<RevocationPushReport> {
  const list = held.verify(file);
  const before = ctx.store.getRevocationList();
  if (before !== undefined && list.generation < before.generation) {
    throw new PlaneError(
      'invalid_input',
      `revocation list: generation ${list.generation} is older than the held generation ${before.generation}`,
      { field: 'list.generation' },
    );
  }
  if (
    before !== undefined &&
    list.generation === before.generation &&
    canonicalJson(list.toJSON()) !== canonicalJson(before.list)
  ) {
    throw new PlaneError(
      'invalid_input',
      `revocation list: generation ${list.generation} is held with other entries (a changed list needs a new generation)`,
      { field: 'list.generation' },
    );
  }
  ctx.store.putRevocationList({
    name: 'current',
    generation: list.generation,
    list: list.toJSON(),
    stored_at_ms: ctx.now(),
  });
  const revoked = await markRevoked(ctx, list);
  held.reset();
  const nodes = await pushBehind(ctx, held);
  return { generation: list.generation, revoked, nodes };
}

/** Marks every placement `list` names `revoked` (a pending reschedule of it is dropped). */
export async function markRevoked(ctx: PlaneContext, list: RevocationList): Promise<string[]> {
  const out: string[] = [];
  for (const p of ctx.store.listPlacements()) {
    if (isGone(p.state) && p.state !== 'lost') continue;
    const why = revokedBy(list, p);
    if (why === undefined) continue;
    ctx.store.removeReschedule(p.instance_id);
    await setState(ctx, p.instance_id, 'revoked', why);
    out.push(p.instance_id);
  }
  return out;
}

/**
 * Pushes the held list to every reachable node whose acknowledged generation is behind, through its
 * kind's driver (`NodeDriver.pushRevocations`; a kind without it, such as a Seed, which runs no Heddle
 * host, is skipped). Each push to a host is a `workload.revoke` carrying a chained controller
 * decision; the answer's generation is stored as the node's acknowledgement. A node that could not
 * take it keeps its old acknowledgement and is tried again after a backoff (10 s doubling to 5 min;
 * a new generation is pushed to everyone at once).
 */
export async function pushBehind(ctx: PlaneContext, held: HeldRevocations): Promise<RevocationNodeResult[]> {
  const list = held.current(ctx);
  if (list === undefined) return [];
  const out: RevocationNodeResult[] = [];
  for (const t of ctx.store.listTargets()) {
    const acked = ctx.store.getRevocationAck(t.node_id)?.generation ?? 0;
    if (acked >= list.generation) continue;
    const push = ctx.drivers.find(t)?.pushRevocations;
    if (push === undefined || t.unreachable_since_ms !== null || t.tier === null) {
      out.push({
        node_id: t.node_id,
        outcome: 'skipped',
        generation: acked,
        torn_down: [],
        reason:
          push === undefined ? `a node of kind ${nodeKind(t)} takes no revocation list` : 'not reachable',
      });
      continue;
    }
    if (!held.due(t.node_id, ctx.now())) {
      out.push({
        node_id: t.node_id,
        outcome: 'skipped',
        generation: acked,
        torn_down: [],
        reason: 'backing off after a failed push',
      });
      continue;
    }
    const r = await push(ctx, t, list, acked);
    held.settled(ctx, t.node_id, r.outcome !== 'failed');
    out.push(r);
  }
  return out;
}

/**
 * Pushes `list` to the `heddle-host` `t` (the host driver's `pushRevocations`): a `workload.revoke`
 * carrying a chained controller decision; the acknowledged generation (or the failure) is stored.
 */
export async function pushTo(
  ctx: PlaneContext,
  t: TargetRecord,
  list: RevocationList,
  acked: number,
): Promise<RevocationNodeResult> {
  const failed = (reason: string): RevocationNodeResult => {
    ctx.store.putRevocationAck({
      node_id: t.node_id,
      generation: acked,
      acked_at_ms: ctx.store.getRevocationAck(t.node_id)?.acked_at_ms ?? null,
      last_error: reason.slice(0, 512),
    });
    return { node_id: t.node_id, outcome: 'failed', generation: acked, torn_down: [], reason };
  };
  const decision = await ctx.chain.append(PLANE_CHAIN_SOURCE, ChainKind.revoke, {
    ...actorField(),
    phase: 'decision',
    controller: ctx.nodeId,
    node_id: t.node_id,
    generation: list.generation,
  });
  try {
    const r = await ctx.caller.call({
      url: t.url,
      target: t.node_id,
      method: REVOKE_METHOD,
      body: { list: list.toJSON() },
      decisionId: decision.hash,
      expectedKey: t.public_key,
    });
    ctx.book.contact(t.node_id);
    const a = r.result;
    const generation = Math.max(acked, a.generation);
    const tornDown = a.torn_down;
    ctx.store.putRevocationAck({ node_id: t.node_id, generation, acked_at_ms: ctx.now(), last_error: null });
    await ctx.chain.append(PLANE_CHAIN_SOURCE, ChainKind.revoke, {
      phase: 'acknowledged',
      decision_id: decision.hash,
      node_id: t.node_id,
      generation,
      applied: a.applied,
      torn_down: tornDown,
    });
    for (const id of tornDown) {
      const p = ctx.store.getPlacement(id);
      if (p !== undefined && (!isGone(p.state) || p.state === 'lost'))
        await setState(ctx, id, 'revoked', `torn down by its node (revocation generation ${generation})`);
    }
    return {
      node_id: t.node_id,
      outcome: a.applied ? 'applied' : 'held',
      generation,
      torn_down: tornDown,
      reason: null,
    };
  } catch (err) {
    const why =
      err instanceof CallFailure && err.refusal !== undefined
        ? `${err.refusal.code}: ${err.refusal.reason}`
        : err instanceof Error
          ? err.message
          : String(err);
    await ctx.chain.append(PLANE_CHAIN_SOURCE, ChainKind.revoke, {
      phase: 'failed',
      decision_id: decision.hash,
      node_id: t.node_id,
      reason: why.slice(0, 512),
    });
    return failed(why);
  }
}
