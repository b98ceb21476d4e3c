import { ChainKind, isGone } from '@heddle/model';
import type { CogBody, VerifiedWorkload } from '@heddle/package';
import type { Explanation } from '@heddle/placement';
import { actorField } from './actor.js';
import { PlaneError } from './errors.js';
import { decideJob, type LiveJobInstance } from './job-decide.js';
import { jobNodeFits, unfitNodes } from './job-eligibility.js';
import { type JobSpec, jobSpecHash } from './job-file.js';
import { jobPlaceOrder, sameRun } from './job-order.js';
import { addJobVersion } from './job-versions.js';
import { placeOrder } from './place.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { JobRecord, JobVersionRecord, PlacementState } from './state-store.js';

// The operator's verbs on jobs (docs/jobs.md): run, plan, revert, stop, status and history.

/** One instance of a job, as `job status` shows it. */
export interface JobInstanceView {
  readonly instance_id: string;
  readonly node_id: string;
  readonly version: number;
  /** Its placement's state (`unknown` when the placement is gone). */
  readonly state: PlacementState | 'unknown';
  /** Its health check held for min_healthy_time. */
  readonly healthy: boolean;
}

/** A job as `job status` shows it. */
export interface JobStatusView {
  readonly name: string;
  readonly type: 'service' | 'system';
  readonly status: JobRecord['status'];
  readonly version: number;
  readonly rollout: JobRecord['rollout'];
  readonly stable_version: number | null;
  readonly blocked: string | null;
  readonly detail: string | null;
  readonly workload: string;
  readonly workload_version: string;
  readonly spec_hash: string;
  /** Instances wanted now: `count`, or the eligible nodes of a system job (0 when stopped). */
  readonly desired: number;
  /** Instances of the desired version that run and are healthy. */
  readonly healthy: number;
  readonly instances: readonly JobInstanceView[];
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/** One version, as `job history` shows it. */
export interface JobVersionView {
  readonly version: number;
  readonly cause: JobVersionRecord['cause'];
  readonly reverted_from: number | null;
  readonly actor: string | null;
  readonly spec_hash: string;
  readonly manifest_hash: string;
  readonly workload: string;
  readonly workload_version: string;
  readonly created_at_ms: number;
  /** It is the job's desired version. */
  readonly current: boolean;
  /** The job file of the version (defaults filled in). */
  readonly spec: JobSpec;
}

/** One change `job plan` shows. */
export interface JobPlanChange {
  /** `place` (a missing instance), `replace` (a new instance for an old one), `remove`, `adopt` (kept in place). */
  readonly action: 'place' | 'replace' | 'remove' | 'adopt';
  /** The node: pinned (a system job), the engine's choice (place, replace), the instance's (remove, adopt); null when no node fits. */
  readonly node_id: string | null;
  /** The instance removed, replaced or adopted; null for a place. */
  readonly instance_id: string | null;
  readonly version: number;
  readonly reason: string | null;
  /** The engine's explanation of a place or replace (a dry run: nothing chained). */
  readonly explanation: Explanation | null;
}

/** What `job plan` answers: what running the file would change, and nothing done. */
export interface JobPlanView {
  readonly name: string;
  /** The job's desired version now, or null for a new job. */
  readonly current_version: number | null;
  /** The version `job run` would make, or null when the file is what runs (no new version). */
  readonly next_version: number | null;
  readonly spec_hash: string;
  readonly workload: string;
  readonly workload_version: string;
  readonly changes: readonly JobPlanChange[];
  /** Every known node and whether the job may use it (null reason: eligible). */
  readonly nodes: readonly { node_id: string; eligible: boolean; reason: string | null }[];
}

/** The answer of `job run`: the job, and whether a new version was made. */
export interface JobRunView {
  /** False when the file is what already runs (no new version, nothing chained). */
  readonly changed: boolean;
  readonly job: JobStatusView;
}

/** The verified package a job file names (`package` directory or `manifest_hash`). */
async function jobPackage(ctx: PlaneContext, spec: JobSpec): Promise<VerifiedWorkload<CogBody>> {
  try {
    return spec.package !== undefined
      ? await ctx.packages.add(spec.package)
      : await ctx.packages.get(spec.manifest_hash ?? '');
  } catch (err) {
    if (err instanceof PlaneError && err.code === 'package_invalid')
      throw new PlaneError('package_invalid', err.message, {
        field: spec.package !== undefined ? 'package' : 'manifest_hash',
        cause: err,
      });
    throw err;
  }
}

/** The job named `name` (`unknown_job` otherwise). */
export function jobOf(ctx: PlaneContext, name: string): JobRecord {
  const job = ctx.store.getJob(name);
  if (job === undefined) throw new PlaneError('unknown_job', `no job named ${name}`, { field: 'name' });
  return job;
}

function versionRecord(ctx: PlaneContext, name: string, version: number): JobVersionRecord {
  const v = ctx.store.getJobVersion(name, version);
  if (v === undefined)
    throw new PlaneError('unknown_job_version', `job ${name} has no version ${version}`, {
      field: 'version',
    });
  return v;
}

/**
 * Runs a job file: verifies its package (a directory is copied into the package store), and makes a
 * new version the desired one (chained) unless the file is what already runs (same spec hash, job
 * running). The reconciler converges it on the next lifecycle tick.
 */
export async function runJob(ctx: PlaneContext, spec: JobSpec): Promise<JobRunView> {
  const verified = await jobPackage(ctx, spec);
  const hash = jobSpecHash(spec, verified.manifestHash);
  const job = ctx.store.getJob(spec.name);
  const cur = job === undefined ? undefined : ctx.store.getJobVersion(job.name, job.version);
  if (job?.status === 'running' && cur?.spec_hash === hash)
    return { changed: false, job: jobStatus(ctx, spec.name) };
  await addJobVersion(
    ctx,
    spec,
    {
      manifest_hash: verified.manifestHash,
      workload: verified.body.id,
      workload_version: verified.body.version,
    },
    { cause: 'run', reverted_from: null },
  );
  return { changed: true, job: jobStatus(ctx, spec.name) };
}

/**
 * Reverts job `name` to `version` (`unknown_job`, `unknown_job_version`): a new version copying that
 * version's spec and package becomes the desired one (chained, phase `revert`); its package is verified
 * again first (a revoked one is refused with `package_invalid`).
 */
export async function revertJob(ctx: PlaneContext, name: string, version: number): Promise<JobRunView> {
  jobOf(ctx, name);
  const target = versionRecord(ctx, name, version);
  await ctx.packages.get(target.manifest_hash);
  await addJobVersion(
    ctx,
    target.spec,
    {
      manifest_hash: target.manifest_hash,
      workload: target.workload,
      workload_version: target.workload_version,
    },
    { cause: 'revert', reverted_from: version },
  );
  return { changed: true, job: jobStatus(ctx, name) };
}

/**
 * Stops job `name`: its status becomes `stopped` (chained, phase `stop`), then its instances are
 * stopped, unloaded and forgotten (what cannot be taken down now is retried by the reconciler).
 * Running the job again makes a new version.
 */
export async function stopJob(
  ctx: PlaneContext,
  name: string,
  reconcile: (name: string) => Promise<unknown>,
): Promise<JobStatusView> {
  const job = jobOf(ctx, name);
  const v = versionRecord(ctx, name, job.version);
  if (job.status !== 'stopped') {
    ctx.store.putJob({ ...job, status: 'stopped', blocked: null, updated_at_ms: ctx.now() });
    await ctx.chain.append(PLANE_CHAIN_SOURCE, ChainKind.job, {
      phase: 'stop',
      job: name,
      version: job.version,
      spec_hash: v.spec_hash,
      ...actorField(),
    });
  }
  await reconcile(name);
  return jobStatus(ctx, name);
}

/** Every job's status, by name. */
export function jobList(ctx: PlaneContext): JobStatusView[] {
  return ctx.store.listJobs().map((j) => jobStatus(ctx, j.name));
}

/** Job `name` as it stands (`unknown_job` otherwise). */
export function jobStatus(ctx: PlaneContext, name: string): JobStatusView {
  const job = jobOf(ctx, name);
  const v = versionRecord(ctx, name, job.version);
  const instances: JobInstanceView[] = ctx.store.listJobInstances(name).map((rec) => {
    const p = ctx.store.getPlacement(rec.instance_id);
    return {
      instance_id: rec.instance_id,
      node_id: rec.node_id,
      version: rec.version,
      state: p?.state ?? 'unknown',
      healthy: rec.healthy_at_ms !== null && p?.state === 'running',
    };
  });
  const desired =
    job.status === 'stopped'
      ? 0
      : v.spec.type === 'system'
        ? [...jobNodeFits(ctx, v.spec, ctx.now()).values()].filter((f) => f === null).length
        : (v.spec.count ?? 0);
  return {
    name,
    type: v.spec.type,
    status: job.status,
    version: job.version,
    rollout: job.rollout,
    stable_version: job.stable_version,
    blocked: job.blocked,
    detail: job.detail,
    workload: v.workload,
    workload_version: v.workload_version,
    spec_hash: v.spec_hash,
    desired,
    healthy: instances.filter((i) => i.version === job.version && i.healthy).length,
    instances,
    created_at_ms: job.created_at_ms,
    updated_at_ms: job.updated_at_ms,
  };
}

/** Every version of job `name`, oldest first (`unknown_job` otherwise). */
export function jobHistory(ctx: PlaneContext, name: string): JobVersionView[] {
  const job = jobOf(ctx, name);
  return ctx.store.listJobVersions(name).map((v) => ({
    version: v.version,
    cause: v.cause,
    reverted_from: v.reverted_from,
    actor: v.actor,
    spec_hash: v.spec_hash,
    manifest_hash: v.manifest_hash,
    workload: v.workload,
    workload_version: v.workload_version,
    created_at_ms: v.created_at_ms,
    current: v.version === job.version,
    spec: v.spec,
  }));
}

/**
 * What running `spec` would change (like `nomad job plan`): every instance to place, replace, adopt
 * or remove, per node, each place with the engine's explanation (a dry run); every replacement at
 * once (the rollout's pace is not simulated). Writes no state and chains nothing (the package is
 * verified, and a directory held in the package store, as `place --dry-run` does).
 */
export async function planJob(ctx: PlaneContext, spec: JobSpec): Promise<JobPlanView> {
  const verified = await jobPackage(ctx, spec);
  const hash = jobSpecHash(spec, verified.manifestHash);
  const job = ctx.store.getJob(spec.name);
  const cur = job === undefined ? undefined : ctx.store.getJobVersion(job.name, job.version);
  const unchanged = job?.status === 'running' && cur?.spec_hash === hash && cur !== undefined;
  const nextVersion = unchanged ? null : (ctx.store.listJobVersions(spec.name).at(-1)?.version ?? 0) + 1;
  const desired: JobVersionRecord =
    unchanged && cur !== undefined
      ? cur
      : {
          job: spec.name,
          version: nextVersion ?? 1,
          spec,
          spec_hash: hash,
          manifest_hash: verified.manifestHash,
          workload: verified.body.id,
          workload_version: verified.body.version,
          cause: 'run',
          reverted_from: null,
          actor: null,
          created_at_ms: ctx.now(),
        };
  const now = ctx.now();
  const live: LiveJobInstance[] = [];
  const versions = new Map<number, JobVersionRecord | undefined>();
  const stopped = job?.status === 'stopped';
  for (const rec of stopped ? [] : ctx.store.listJobInstances(spec.name)) {
    const p = ctx.store.getPlacement(rec.instance_id);
    if (p === undefined || isGone(p.state) || p.state === 'failed' || p.state === 'finished') continue;
    if (!versions.has(rec.version))
      versions.set(rec.version, ctx.store.getJobVersion(spec.name, rec.version));
    const v = versions.get(rec.version);
    live.push({
      instance_id: rec.instance_id,
      node_id: p.node_id,
      version: rec.version,
      healthy: rec.healthy_at_ms !== null && p.state === 'running',
      same: v !== undefined && sameRun(v, desired),
      placed_at_ms: rec.placed_at_ms,
    });
  }
  const fits = jobNodeFits(ctx, spec, now);
  const actions = decideJob({
    type: spec.type,
    count: spec.count ?? 0,
    version: desired.version,
    fits,
    instances: live,
    maxParallel: spec.update.max_parallel,
    failed: unchanged && job?.rollout === 'failed',
    all: !unchanged,
  });
  const changes: JobPlanChange[] = [];
  for (const id of actions.adopt) {
    const i = live.find((l) => l.instance_id === id);
    changes.push({
      action: 'adopt',
      node_id: i?.node_id ?? null,
      instance_id: id,
      version: desired.version,
      reason: 'it already runs the same package, config values and mode',
      explanation: null,
    });
  }
  // Each planned place leaves its node out of the next one's view (one instance of a version per node).
  const exclude = unfitNodes(fits);
  for (const a of actions.place) {
    const r = await placeOrder(ctx, { ...jobPlaceOrder(desired, a.node), dry_run: true }, { exclude });
    const node = r.explanation.node_id ?? null;
    if (node !== null && a.node === null)
      exclude.set(node, `planned for another instance of job ${spec.name}`);
    changes.push({
      action: a.replaces === null ? 'place' : 'replace',
      node_id: r.explanation.outcome === 'placed' ? node : a.node,
      instance_id: a.replaces,
      version: desired.version,
      reason: r.explanation.outcome === 'placed' ? null : r.explanation.summary,
      explanation: r.explanation,
    });
  }
  for (const r of actions.remove) {
    changes.push({
      action: 'remove',
      node_id: r.node_id,
      instance_id: r.instance_id,
      version: r.version,
      reason: r.reason,
      explanation: null,
    });
  }
  return {
    name: spec.name,
    current_version: job?.version ?? null,
    next_version: nextVersion,
    spec_hash: hash,
    workload: verified.body.id,
    workload_version: verified.body.version,
    changes,
    nodes: [...fits].map(([node_id, why]) => ({ node_id, eligible: why === null, reason: why })),
  };
}
