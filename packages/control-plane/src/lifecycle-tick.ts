import { isGone } from '@heddle/model';
import type { RevocationList } from '@heddle/package';
import { CallFailure, isListing } from '@heddle/protocol';
import { mapBounded } from './health.js';
import { type HostListing, type ListedInstance, lifeOf, listingOf, ofThisState } from './host-listing.js';
import { sendVerb, startInstance } from './instance-verbs.js';
import type { JobReconcileReport } from './job-reconcile.js';
import { refreshAll } from './node-drivers.js';
import { unloadOrphan } from './orphans.js';
import { canReach, moveTo, setState } from './placement-life.js';
import type { PlaneContext } from './plane-context.js';
import {
  backoffMs,
  emptyOutcome,
  loseInstance,
  type RescheduleOutcome,
  runReschedules,
} from './reschedule.js';
import { type HeldRevocations, pushBehind, type RevocationNodeResult } from './revocation-push.js';
import type { SettleReport } from './settle.js';
import type { AlertRecord, PlacementRecord, TargetRecord } from './state-store.js';

const EMPTY_SETTLE: SettleReport = Object.freeze({ placed: [], nothing: [], pending: [] });

/** What one lifecycle tick did (the controller daemon logs it). */
export interface TickReport {
  /** Nodes that answered their describe, and those declared dead this tick or still dead. */
  readonly reachable: readonly string[];
  readonly dead: readonly string[];
  /** Instances moved to `lost`. */
  readonly lost: readonly string[];
  /** Replacements placed. */
  readonly rescheduled: readonly { instance_id: string; replaced_by: string; node_id: string }[];
  /** Reschedules that found no node this time. */
  readonly waiting: readonly { instance_id: string; next_at_ms: number; reason: string }[];
  /** Alerts raised this tick. */
  readonly alerts: readonly AlertRecord[];
  /** Orphans (replaced while their node was away) unloaded from their node. */
  readonly orphans_unloaded: readonly string[];
  /** Lost instances found running on their node again and adopted back. */
  readonly adopted: readonly string[];
  /** Instances the host stopped when its controller lease expired, started again. */
  readonly restarted: readonly string[];
  /** Placements marked revoked. */
  readonly revoked: readonly string[];
  /** Revocation pushes to hosts behind the held generation. */
  readonly revocations_pushed: readonly RevocationNodeResult[];
  readonly settle: SettleReport;
  /** What the job reconciler did after the tick (docs/jobs.md); absent when the plane ran none. */
  readonly jobs?: readonly JobReconcileReport[];
  /** What could not be done (each names the node or instance); the next tick tries again. */
  readonly errors: readonly string[];
}

/**
 * The controller's lifecycle tick (docs/lifecycle.md): refresh every node (a signed describe) -> reconcile
 * each reachable host's instances with its listing -> death detection -> reschedules due -> orphan
 * unloads due -> revocation push to hosts behind -> settle. The instances reconciled are the placements
 * of the (possibly shared) state, whoever of its controllers placed them; an instance a host lists
 * under another deployment's controller is left alone (see {@link ofThisState}). Time comes from the context's clock; the tick keeps the in-memory part of its state
 * (orphan backoff, when it started observing) here and the rest in the store.
 */
export class LifecycleTicker {
  /** When this controller process started observing (a fresh restart is not death). */
  readonly startedAtMs: number;
  readonly #ctx: PlaneContext;
  readonly #held: HeldRevocations;
  readonly #orphanRetry = new Map<string, { attempts: number; nextAtMs: number }>();

  constructor(ctx: PlaneContext, held: HeldRevocations) {
    this.#ctx = ctx;
    this.#held = held;
    this.startedAtMs = ctx.now();
  }

  /**
   * One tick (see the class). `settle` is the plane's single-flight settling pass. `fence`, when
   * given, is asked before each step that writes (each node's reconcile, each loss, the reschedules,
   * the orphan unloads, the revocation push, settling): once it answers false the tick does nothing
   * more and notes `fenced` in its errors (a controller that lost its leadership lease stops there).
   */
  async tick(settle: () => Promise<SettleReport>, fence?: () => boolean): Promise<TickReport> {
    const ctx = this.#ctx;
    let fenced = false;
    const may = (): boolean => {
      if (fenced) return false;
      if (fence === undefined || fence()) return true;
      fenced = true;
      errors.push('fenced: leadership lost, the rest of this tick was not run');
      return false;
    };
    const out = emptyOutcome();
    const errors: string[] = [];
    const adopted: string[] = [];
    const restarted: string[] = [];
    const orphans: PlacementRecord[] = [];
    const report = (what: string, err: unknown): void => {
      errors.push(`${what}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 512));
    };
    let revocations: RevocationList | undefined;
    try {
      revocations = this.#held.current(ctx);
    } catch (err) {
      report('revocation list', err);
    }
    // Health checks: each bounded on its own, in parallel (bounded concurrency), writes grouped.
    await refreshAll(ctx, (nodeId, err) => report(`refresh ${nodeId}`, err)).catch((err: unknown) =>
      report('health round', err),
    );
    const targets = ctx.store.listTargets();
    const reachable = targets.filter((t) => t.unreachable_since_ms === null);
    // Listings are asked in parallel (of the kinds of node that list their instances), then reconciled
    // one node after the other.
    const listers = reachable.flatMap((t) => {
      const list = ctx.drivers.find(t)?.listInstances;
      return list === undefined ? [] : [{ t, list }];
    });
    // Lost instances that may still run on their node, which answers again: listed there but not
    // adopted back (a transient state), or on a node whose listing could not be read. None is replaced
    // this tick (docs/lifecycle.md: wait and ask).
    const hold = new Set<string>();
    const holdNode = (nodeId: string): void => {
      for (const p of ctx.store.listPlacements(nodeId)) if (p.state === 'lost') hold.add(p.instance_id);
    };
    const listings = await mapBounded(listers, ctx.config.healthConcurrency, async ({ t, list }) => {
      const asked = ctx.now();
      try {
        return { t, asked, listing: await list(ctx, t) };
      } catch (err) {
        holdNode(t.node_id);
        report(`reconcile ${t.node_id}`, err);
        return undefined;
      }
    });
    for (const l of listings) {
      if (l === undefined || !may()) continue;
      try {
        await this.#reconcile(l.t, l.listing, l.asked, revocations, out, {
          adopted,
          restarted,
          orphans,
          hold,
          report,
        });
      } catch (err) {
        holdNode(l.t.node_id);
        report(`reconcile ${l.t.node_id}`, err);
      }
    }
    for (const t of reachable) {
      const driver = ctx.drivers.find(t);
      if (driver !== undefined && driver.listInstances === undefined) await this.#rejoin(t, adopted, report);
    }
    const dead = new Set(targets.filter((t) => this.isDead(t)).map((t) => t.node_id));
    for (const nodeId of dead) {
      for (const p of ctx.store.listPlacements(nodeId)) {
        if (isGone(p.state) || !may()) continue;
        try {
          await loseInstance(ctx, p, 'node dead', true, revocations, out);
        } catch (err) {
          report(`lose ${p.instance_id}`, err);
        }
      }
    }
    try {
      if (may()) await runReschedules(ctx, dead, revocations, out, hold);
    } catch (err) {
      report('reschedules', err);
    }
    const unloaded = may() ? await this.#orphans(orphans, report) : [];
    let pushed: RevocationNodeResult[] = [];
    try {
      if (may()) pushed = await pushBehind(ctx, this.#held);
    } catch (err) {
      report('revocation push', err);
    }
    for (const r of pushed) for (const id of r.torn_down) if (!out.revoked.includes(id)) out.revoked.push(id);
    const settled = may() ? await settle() : EMPTY_SETTLE;
    return {
      reachable: reachable.map((t) => t.node_id),
      dead: [...dead],
      lost: out.lost,
      rescheduled: out.rescheduled,
      waiting: out.waiting,
      alerts: out.alerts,
      orphans_unloaded: unloaded,
      adopted,
      restarted,
      revoked: out.revoked,
      revocations_pushed: pushed.filter((r) => r.outcome !== 'skipped'),
      settle: settled,
      errors,
    };
  }

  /**
   * A node is dead when it has been unreachable for `deadAfterMs` of this process's own observation
   * (measured from the latest of: when it became unreachable, when this controller started, when it
   * last answered anything).
   */
  isDead(t: TargetRecord): boolean {
    if (t.unreachable_since_ms === null) return false;
    const since = Math.max(t.unreachable_since_ms, this.startedAtMs, this.#ctx.book.heardAt(t.node_id) ?? 0);
    return this.#ctx.now() - since >= this.#ctx.config.deadAfterMs;
  }

  /** Reconciles the controller's placements on `t` with the host's listing taken at `asked`. */
  async #reconcile(
    t: TargetRecord,
    listing: HostListing,
    asked: number,
    revocations: RevocationList | undefined,
    out: RescheduleOutcome,
    acc: {
      adopted: string[];
      restarted: string[];
      orphans: PlacementRecord[];
      hold: Set<string>;
      report: (what: string, err: unknown) => void;
    },
  ): Promise<void> {
    const ctx = this.#ctx;
    const listed = new Map(listing.instances.map((i) => [i.instance_id, i]));
    const departed = new Map(listing.departed.map((d) => [d.instance_id, d]));
    for (const snap of ctx.store.listPlacements(t.node_id)) {
      // Read again: a verb or a place may have moved it since the list was read.
      const p = ctx.store.getPlacement(snap.instance_id);
      if (p === undefined || p.node_id !== t.node_id) continue;
      try {
        const i = listed.get(p.instance_id);
        if (i !== undefined) {
          if (!ofThisState(ctx.nodeId, p, i)) {
            if (p.state === 'lost') acc.hold.add(p.instance_id); // listed there: not replaced
            continue; // another deployment's instance under the same id: left alone
          }
          await this.#listedOne(p, i, acc);
          continue;
        }
        const d = departed.get(p.instance_id);
        if (
          d?.reason === 'unloaded' ||
          (d === undefined && (p.state === 'rescheduled' || p.state === 'revoked'))
        ) {
          // Gone from its node (unloaded there, or an orphan that is no longer there).
          if (p.state !== 'unloaded' && p.placed_at_ms < asked)
            await setState(
              ctx,
              p.instance_id,
              'unloaded',
              d === undefined ? 'gone from its node' : 'unloaded on its node',
            );
        } else if (d?.reason === 'revoked') {
          if (!isGone(p.state) || p.state === 'lost') {
            ctx.store.removeReschedule(p.instance_id);
            await setState(ctx, p.instance_id, 'revoked', 'revoked on its node');
            out.revoked.push(p.instance_id);
          }
        } else if (!isGone(p.state) && p.placed_at_ms < asked) {
          // Not listed (or departed lost: a host restart could not re-adopt it).
          const why =
            d?.reason === 'lost'
              ? 'lost on its node (not re-adopted after a restart)'
              : 'not listed by its node';
          await loseInstance(ctx, p, why, false, revocations, out);
        }
      } catch (err) {
        if (p.state === 'lost') acc.hold.add(p.instance_id);
        acc.report(`reconcile ${p.instance_id}`, err);
      }
    }
  }

  /** A placement its host lists. */
  async #listedOne(
    p: PlacementRecord,
    i: ListedInstance,
    acc: { adopted: string[]; restarted: string[]; orphans: PlacementRecord[]; hold: Set<string> },
  ): Promise<void> {
    const ctx = this.#ctx;
    const life = lifeOf(i);
    if (p.state === 'rescheduled' || p.state === 'revoked') {
      acc.orphans.push(p); // replaced (or revoked) while away: it must go
      return;
    }
    if (p.state === 'unloaded') return;
    if (p.state === 'lost') {
      const row = ctx.store.getReschedule(p.instance_id);
      if (row?.decision_id !== null && row !== undefined) return; // a replacement may exist: settle first
      if (life === undefined || isGone(life) || !canReach('lost', life)) {
        acc.hold.add(p.instance_id); // its node lists it: never replaced while it is there
        return;
      }
      ctx.store.removeReschedule(p.instance_id);
      await moveTo(ctx, p.instance_id, life, 'adopted back: still on its node');
      acc.adopted.push(p.instance_id);
    } else if (life !== undefined && life !== p.state && !isGone(life)) {
      if (canReach(p.state, life)) await moveTo(ctx, p.instance_id, life, 'reported by its node');
    }
    const now = ctx.store.getPlacement(p.instance_id) ?? p;
    if (i.lease_stopped && now.desired_running && !isGone(now.state)) {
      await startInstance(ctx, p.instance_id, 'lease resumed: its controller is back');
      acc.restarted.push(p.instance_id);
    }
  }

  /**
   * A node whose kind lists nothing (a Seed): each placement lost there, on a node that answers again,
   * is asked for its status, and adopted back when the node still has it.
   */
  async #rejoin(
    t: TargetRecord,
    adopted: string[],
    report: (what: string, err: unknown) => void,
  ): Promise<void> {
    const ctx = this.#ctx;
    for (const p of ctx.store.listPlacements(t.node_id)) {
      if (p.state !== 'lost' || ctx.store.getReschedule(p.instance_id)?.decision_id) continue;
      try {
        const r = await sendVerb(ctx, p, 'workload.status', { instance_id: p.instance_id });
        const remote = r.instance;
        const state =
          typeof remote === 'object' && remote !== null && !Array.isArray(remote) ? remote.state : undefined;
        const life = lifeOf({ life: null, state: typeof state === 'string' ? state : 'unknown', mode: null });
        if (life === undefined || isGone(life) || !canReach('lost', life)) continue;
        ctx.store.removeReschedule(p.instance_id);
        await moveTo(ctx, p.instance_id, life, 'adopted back: still on its node');
        adopted.push(p.instance_id);
      } catch (err) {
        report(`status ${p.instance_id}`, err);
      }
    }
  }

  /** Unloads the orphans that are due (stop, then unload; backoff after a failure). */
  async #orphans(
    orphans: readonly PlacementRecord[],
    report: (what: string, err: unknown) => void,
  ): Promise<string[]> {
    const ctx = this.#ctx;
    const done: string[] = [];
    for (const seen of orphans) {
      // Read again: a reschedule of this tick may have placed a replacement on this node under the
      // same (derived) instance id, taking the orphan over; that one must not be unloaded.
      const p = ctx.store.getPlacement(seen.instance_id);
      if (
        p === undefined ||
        p.node_id !== seen.node_id ||
        (p.state !== 'rescheduled' && p.state !== 'revoked')
      )
        continue;
      const retry = this.#orphanRetry.get(p.instance_id);
      if (retry !== undefined && retry.nextAtMs > ctx.now()) continue;
      try {
        await unloadOrphan(ctx, p);
        this.#orphanRetry.delete(p.instance_id);
        done.push(p.instance_id);
      } catch (err) {
        const attempts = (retry?.attempts ?? 0) + 1;
        this.#orphanRetry.set(p.instance_id, { attempts, nextAtMs: ctx.now() + backoffMs(ctx, attempts) });
        report(`orphan ${p.instance_id}`, err);
      }
    }
    return done;
  }
}

/**
 * A `heddle-host`'s listing of its instances (the host driver's `listInstances`): `workload.status`
 * with `include_departed`, as a health call, parsed (a listing that does not parse is refused whole).
 */
export async function hostListing(ctx: PlaneContext, t: TargetRecord): Promise<HostListing> {
  try {
    const r = await ctx.caller.call({
      url: t.url,
      target: t.node_id,
      method: 'workload.status',
      body: { include_departed: true },
      expectedKey: t.public_key,
      health: true,
    });
    ctx.book.contact(t.node_id);
    if (!isListing(r.result)) throw new Error('the answer is not a listing');
    return listingOf(r.result);
  } catch (err) {
    throw err instanceof CallFailure ? new Error(`status listing: ${err.message}`) : err;
  }
}
