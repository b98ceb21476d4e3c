import { errorMessage } from '@heddle/envelope';
import { ChainKind, isGone } from '@heddle/model';
import type { RevocationList } from '@heddle/package';
import { stopInstance, unloadInstance } from './instance-verbs.js';
import { decideJob, type JobActions, type LiveJobInstance } from './job-decide.js';
import { jobNodeFits, unfitNodes } from './job-eligibility.js';
import { jobPlaceOrder, sameRun } from './job-order.js';
import { failRollout } from './job-rollout.js';
import { placeOrder } from './place.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { JobInstanceRecord, JobRecord, JobVersionRecord, PlacementRecord } from './state-store.js';

// The job reconciler (docs/jobs.md, "Reconciliation"): once per lifecycle tick, after the tick has
// brought every placement up to date with its node, each running job is compared with its instances
// and converged through the normal governed place path. It owns the instances of jobs: the
// rescheduler and a drain leave them to it.

/** What reconciling one job did. */
export interface JobReconcileReport {
  readonly job: string;
  readonly version: number;
  /** Instances placed (their id and node). */
  readonly placed: { instance_id: string; node_id: string }[];
  /** Instances taken down and forgotten. */
  readonly removed: string[];
  /** Old-version instances adopted by the desired version in place. */
  readonly adopted: string[];
  /** Instances forgotten because they are gone (lost, revoked, failed, unloaded). */
  readonly forgotten: string[];
  /** Why something could not be done (the job's `blocked`), or null. */
  readonly blocked: string | null;
  readonly rollout: JobRecord['rollout'];
}

/** The revocation list the controller distributes, if any (what a job's package is checked against besides the package store's). */
export type HeldList = () => RevocationList | undefined;

/** Reconciles every job (see {@link reconcileJob}); a job that throws is reported in `errors` and the others go on. */
export async function reconcileJobs(
  ctx: PlaneContext,
  held: HeldList = () => undefined,
): Promise<{ reports: JobReconcileReport[]; errors: string[] }> {
  const reports: JobReconcileReport[] = [];
  const errors: string[] = [];
  for (const job of ctx.store.listJobs()) {
    try {
      const r = await reconcileJob(ctx, job.name, held);
      if (r !== undefined) reports.push(r);
    } catch (err) {
      errors.push(`job ${job.name}: ${errorMessage(err)}`);
    }
  }
  return { reports, errors };
}

/** Reconciles one job: forgets its gone instances, checks health, then adopts, places and removes. */
export async function reconcileJob(
  ctx: PlaneContext,
  name: string,
  held: HeldList = () => undefined,
): Promise<JobReconcileReport | undefined> {
  const job = ctx.store.getJob(name);
  if (job === undefined) return undefined;
  const report = {
    job: name,
    version: job.version,
    placed: [] as { instance_id: string; node_id: string }[],
    removed: [] as string[],
    adopted: [] as string[],
    forgotten: [] as string[],
  };
  if (job.status === 'stopped') {
    for (const rec of ctx.store.listJobInstances(name)) {
      await takeDown(ctx, rec.instance_id, `job ${name} stopped`);
      ctx.store.removeJobInstance(rec.instance_id);
      report.removed.push(rec.instance_id);
    }
    return { ...report, blocked: null, rollout: job.rollout };
  }
  const desired = versionOf(ctx, job.name, job.version);
  const now = ctx.now();
  const { live, failure } = await survey(ctx, job, desired, now, report.forgotten);
  if (failure !== undefined) {
    const next = await failRollout(ctx, job, desired, failure);
    return { ...report, version: next.version, blocked: next.blocked, rollout: next.rollout };
  }
  const fits = jobNodeFits(ctx, desired.spec, now);
  const actions = decideJob({
    type: desired.spec.type,
    count: desired.spec.count ?? 0,
    version: desired.version,
    fits,
    instances: live,
    maxParallel: desired.spec.update.max_parallel,
    failed: job.rollout === 'failed',
  });
  const blocked = await act(ctx, job, desired, actions, unfitNodes(fits), report, held);
  return { ...report, blocked, rollout: await settleRollout(ctx, job, desired, blocked) };
}

/** The stored version `version` of `job` (a missing one is a broken store: `StateError`-like plain error). */
export function versionOf(ctx: PlaneContext, job: string, version: number): JobVersionRecord {
  const v = ctx.store.getJobVersion(job, version);
  if (v === undefined) throw new Error(`job ${job}: version ${version} is not stored`);
  return v;
}

const DONE = new Set(['failed', 'finished']);

/**
 * The job's live instances (health brought up to date), forgetting the gone ones (a failed or finished
 * one is unloaded first). `failure`: why the rollout of the desired version failed, if it did.
 */
async function survey(
  ctx: PlaneContext,
  job: JobRecord,
  desired: JobVersionRecord,
  now: number,
  forgotten: string[],
): Promise<{ live: LiveJobInstance[]; failure: string | undefined }> {
  const live: LiveJobInstance[] = [];
  let failure: string | undefined;
  const rolling = job.rollout === 'rolling';
  const minHealthyMs = desired.spec.update.min_healthy_time_secs * 1000;
  const deadlineMs = desired.spec.update.health_check.deadline_secs * 1000;
  const versions = new Map<number, JobVersionRecord>([[desired.version, desired]]);
  for (const rec of ctx.store.listJobInstances(job.name)) {
    const p = ctx.store.getPlacement(rec.instance_id);
    if (p === undefined || isGone(p.state) || DONE.has(p.state)) {
      if (p !== undefined && DONE.has(p.state)) {
        if (rolling && rec.version === desired.version)
          failure ??= `instance ${rec.instance_id} on ${rec.node_id} ${p.state} before it was healthy`;
        await takeDown(ctx, rec.instance_id, `job ${job.name}: its instance ${p.state}`);
      }
      ctx.store.removeJobInstance(rec.instance_id);
      forgotten.push(rec.instance_id);
      continue;
    }
    const healthyAt = healthSince(p, rec, now, minHealthyMs);
    if (healthyAt !== rec.healthy_at_ms) ctx.store.putJobInstance({ ...rec, healthy_at_ms: healthyAt });
    if (
      rolling &&
      rec.version === desired.version &&
      healthyAt === null &&
      now - rec.placed_at_ms > deadlineMs
    )
      failure ??= `instance ${rec.instance_id} on ${rec.node_id} was not healthy within ${desired.spec.update.health_check.deadline_secs} s (it is ${p.state})`;
    let v = versions.get(rec.version);
    if (v === undefined) {
      v = ctx.store.getJobVersion(job.name, rec.version) ?? desired;
      versions.set(rec.version, v);
    }
    live.push({
      instance_id: rec.instance_id,
      node_id: p.node_id,
      version: rec.version,
      healthy: healthyAt !== null && p.state === 'running',
      same: sameRun(v, desired),
      placed_at_ms: rec.placed_at_ms,
    });
  }
  return { live, failure };
}

/**
 * When `p` became healthy: kept once set; set now when it has been `running` (no state change) for
 * `minHealthyMs`; else null.
 */
function healthSince(
  p: PlacementRecord,
  rec: JobInstanceRecord,
  now: number,
  minHealthyMs: number,
): number | null {
  if (rec.healthy_at_ms !== null) return rec.healthy_at_ms;
  return p.state === 'running' && now - p.updated_at_ms >= minHealthyMs ? now : null;
}

/** Carries out `actions`: adopt, place (each through the governed path), then remove. Returns the job's blocked reason. */
async function act(
  ctx: PlaneContext,
  job: JobRecord,
  desired: JobVersionRecord,
  actions: JobActions,
  exclude: ReadonlyMap<string, string>,
  report: {
    placed: { instance_id: string; node_id: string }[];
    removed: string[];
    adopted: string[];
  },
  held: HeldList,
): Promise<string | null> {
  for (const id of actions.adopt) {
    const rec = ctx.store.getJobInstance(id);
    if (rec === undefined) continue;
    ctx.store.putJobInstance({ ...rec, version: desired.version });
    report.adopted.push(id);
  }
  const reasons: string[] = [];
  if (actions.place.length > 0) {
    // A revoked (or no longer valid) package is never placed again: the job is blocked, naming why.
    // Checked against the package store's revocations and the list the controller distributes.
    const valid = await ctx.packages.get(desired.manifest_hash).then(
      (v) => {
        const hit = held()?.firstRevoked({
          packageId: v.packageId,
          signerKeys: v.signerKeys,
          artifactHashes: v.artifactHashes,
        });
        return hit === undefined ? undefined : `revoked: ${hit.kind} ${hit.ref}`;
      },
      (err: unknown) => errorMessage(err),
    );
    if (valid !== undefined) reasons.push(`its package cannot be placed: ${valid}`);
    else {
      for (const a of actions.place) {
        const why = await placeOne(ctx, job, desired, a.node, exclude, report.placed);
        if (why !== undefined) reasons.push(why);
      }
    }
  }
  for (const r of actions.remove) {
    const down = await takeDown(ctx, r.instance_id, `job ${job.name}: ${r.reason}`);
    if (down !== undefined && ctx.store.getPlacement(r.instance_id)?.state !== 'unloaded') {
      reasons.push(`instance ${r.instance_id} could not be taken down: ${down}`);
      continue;
    }
    ctx.store.removeJobInstance(r.instance_id);
    report.removed.push(r.instance_id);
  }
  const blocked = reasons.length === 0 ? null : [...new Set(reasons)].join('; ').slice(0, 2048);
  return blocked;
}

async function placeOne(
  ctx: PlaneContext,
  job: JobRecord,
  desired: JobVersionRecord,
  node: string | null,
  exclude: ReadonlyMap<string, string>,
  placed: { instance_id: string; node_id: string }[],
): Promise<string | undefined> {
  try {
    const r = await placeOrder(ctx, jobPlaceOrder(desired, node), { exclude, hold: false });
    if (r.status !== 'placed' || r.instance === null)
      return `a place of version ${desired.version} ended ${r.status} (decision ${r.decision_id ?? 'none'})`;
    ctx.store.putJobInstance({
      instance_id: r.instance.instance_id,
      job: job.name,
      version: desired.version,
      node_id: r.instance.node_id,
      order_id: r.instance.order_id,
      placed_at_ms: ctx.now(),
      healthy_at_ms: null,
    });
    placed.push({ instance_id: r.instance.instance_id, node_id: r.instance.node_id });
    return undefined;
  } catch (err) {
    return `${node === null ? 'no node' : `node ${node}`}: ${errorMessage(err)}`.slice(0, 1024);
  }
}

/** Stops (when it runs) and unloads an instance; the error text when that failed, else undefined. */
export async function takeDown(
  ctx: PlaneContext,
  instanceId: string,
  reason: string,
): Promise<string | undefined> {
  const p = ctx.store.getPlacement(instanceId);
  if (p === undefined || isGone(p.state)) return undefined;
  try {
    if (p.state === 'running' || p.state === 'restarting' || p.state === 'unhealthy')
      await stopInstance(ctx, instanceId, undefined, reason);
    await unloadInstance(ctx, instanceId, reason);
    return undefined;
  } catch (err) {
    return errorMessage(err);
  }
}

/**
 * Writes the job's blocked reason and, when every instance runs the desired version and is healthy
 * (and nothing is blocked), completes its rollout (chained). Returns the rollout state.
 */
async function settleRollout(
  ctx: PlaneContext,
  job: JobRecord,
  desired: JobVersionRecord,
  blocked: string | null,
): Promise<JobRecord['rollout']> {
  const cur = ctx.store.getJob(job.name) ?? job;
  let rollout = cur.rollout;
  let stable = cur.stable_version;
  if (rollout === 'rolling' && blocked === null) {
    const instances = ctx.store.listJobInstances(job.name);
    const fits = jobNodeFits(ctx, desired.spec, ctx.now());
    const want =
      desired.spec.type === 'system'
        ? [...fits.values()].filter((f) => f === null).length
        : (desired.spec.count ?? 0);
    const done =
      instances.length === want &&
      instances.every((i) => i.version === desired.version && i.healthy_at_ms !== null);
    if (done) {
      rollout = 'complete';
      stable = desired.version;
    }
  }
  if (rollout !== cur.rollout || blocked !== cur.blocked || stable !== cur.stable_version) {
    ctx.store.putJob({ ...cur, rollout, stable_version: stable, blocked, updated_at_ms: ctx.now() });
    if (rollout === 'complete' && cur.rollout !== 'complete') {
      await ctx.chain.append(PLANE_CHAIN_SOURCE, ChainKind.job, {
        phase: 'rollout_complete',
        job: job.name,
        version: desired.version,
        spec_hash: desired.spec_hash,
      });
    }
  }
  return rollout;
}
