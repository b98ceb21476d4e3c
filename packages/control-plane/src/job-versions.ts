import { ChainKind } from '@heddle/model';
import { actorField, currentActor } from './actor.js';
import type { JobSpec } from './job-file.js';
import { jobSpecHash } from './job-file.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { JobRecord, JobVersionRecord } from './state-store.js';

/** The package a job version runs, as the package store verified it. */
export interface JobPackage {
  readonly manifest_hash: string;
  readonly workload: string;
  readonly workload_version: string;
}

/** Why a version is made. */
export interface NewVersion {
  readonly cause: JobVersionRecord['cause'];
  /** For a revert: the version whose spec it copies. */
  readonly reverted_from: number | null;
  /** For an auto revert: why the rollout failed (kept in the job's `detail`). */
  readonly detail?: string | undefined;
}

/**
 * Makes the next version of job `spec.name` (1 for a new job) and makes it the desired one, the job
 * running and its rollout `rolling`: the version and the job are written in one transaction, then
 * chained (`workload.job`, phase `run`, `revert` or `auto_revert`, with the job, version and spec
 * hash, and the operator acting). Returns the job and the version.
 */
export async function addJobVersion(
  ctx: PlaneContext,
  spec: JobSpec,
  pkg: JobPackage,
  why: NewVersion,
): Promise<{ job: JobRecord; version: JobVersionRecord }> {
  const now = ctx.now();
  const actor = currentActor()?.name ?? null;
  const [job, version] = ctx.store.transaction(() => {
    const prev = ctx.store.getJob(spec.name);
    const last = ctx.store.listJobVersions(spec.name).at(-1)?.version ?? 0;
    const v: JobVersionRecord = {
      job: spec.name,
      version: last + 1,
      spec,
      spec_hash: jobSpecHash(spec, pkg.manifest_hash),
      manifest_hash: pkg.manifest_hash,
      workload: pkg.workload,
      workload_version: pkg.workload_version,
      cause: why.cause,
      reverted_from: why.reverted_from,
      actor,
      created_at_ms: now,
    };
    const j: JobRecord = {
      name: spec.name,
      version: v.version,
      status: 'running',
      rollout: 'rolling',
      stable_version: prev?.stable_version ?? null,
      blocked: null,
      detail: why.detail ?? null,
      created_at_ms: prev?.created_at_ms ?? now,
      updated_at_ms: now,
    };
    ctx.store.putJobVersion(v);
    ctx.store.putJob(j);
    return [j, v] as const;
  });
  await ctx.chain.append(PLANE_CHAIN_SOURCE, ChainKind.job, {
    phase: why.cause,
    job: spec.name,
    version: version.version,
    spec_hash: version.spec_hash,
    manifest_hash: version.manifest_hash,
    reverted_from: why.reverted_from,
    ...(why.detail === undefined ? {} : { reason: why.detail.slice(0, 512) }),
    ...actorField(),
  });
  return { job, version };
}
