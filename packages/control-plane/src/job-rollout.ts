import { ChainKind } from '@heddle/model';
import { addJobVersion } from './job-versions.js';
import { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
import type { JobRecord, JobVersionRecord } from './state-store.js';

/**
 * The rollout of `desired` failed (`reason`: an instance of it failed its health check). With
 * `update.auto_revert` and a last healthy version (`stable_version`, not the failed one), unless the
 * failed version is itself an automatic revert, the job is
 * reverted: a new version copying the stable one's spec is made the desired one (chained, phase
 * `auto_revert`), and the reconciler replaces the failed version's instances with it. Otherwise the
 * rollout stops: the job's rollout is `failed` with the reason (chained, phase `rollout_failed`), and
 * nothing more of the failed version is placed until the operator runs or reverts the job.
 */
export async function failRollout(
  ctx: PlaneContext,
  job: JobRecord,
  desired: JobVersionRecord,
  reason: string,
): Promise<JobRecord> {
  const stable =
    job.stable_version === null ? undefined : ctx.store.getJobVersion(job.name, job.stable_version);
  const detail = `version ${desired.version} failed its health check: ${reason}`;
  // An automatic revert that fails in turn is not reverted again (that would make versions forever).
  if (
    desired.spec.update.auto_revert &&
    desired.cause !== 'auto_revert' &&
    stable !== undefined &&
    stable.version !== desired.version
  ) {
    const { job: next } = await addJobVersion(
      ctx,
      stable.spec,
      {
        manifest_hash: stable.manifest_hash,
        workload: stable.workload,
        workload_version: stable.workload_version,
      },
      {
        cause: 'auto_revert',
        reverted_from: stable.version,
        detail: `${detail}; reverted to version ${stable.version}`,
      },
    );
    return next;
  }
  const why = !desired.spec.update.auto_revert
    ? detail
    : desired.cause === 'auto_revert'
      ? `${detail}; it was itself an automatic revert, so it is not reverted again`
      : stable === undefined
        ? `${detail}; no earlier version was healthy, so nothing to revert to`
        : detail;
  const next: JobRecord = { ...job, rollout: 'failed', detail: why, updated_at_ms: ctx.now() };
  ctx.store.putJob(next);
  await ctx.chain.append(PLANE_CHAIN_SOURCE, ChainKind.job, {
    phase: 'rollout_failed',
    job: job.name,
    version: desired.version,
    spec_hash: desired.spec_hash,
    reason: why.slice(0, 512),
  });
  return next;
}
