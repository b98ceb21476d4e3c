import { afterEach, describe, expect, it } from 'vitest';
import { parseJobSpec } from './job-file.js';
import {
  Clock,
  closeOpened,
  hosts,
  nativePackage,
  planeWith,
  runningOf,
  tickUntil,
} from './jobs.test-util.js';
import type { TestPlane } from './test-fixtures.js';

// Rolling updates (docs/jobs.md, "Updates"), reverts and stop, against real native hosts: version 1
// runs hello-cog (a listener that keeps running); a failing version's program exits at once, and the
// host's supervisor gives up on it after one restart.

afterEach(closeOpened);

const SUPERVISOR = { supervisor: { maxRestarts: 1, backoffInitialMs: 100, backoffMaxMs: 200, jitter: 0 } };

/**
 * The job file: a healthy version needs 1 s of running; a failing one 60 s (more than the test's clock
 * ever moves while it runs, so an instance seen running between two of its restarts never counts as
 * healthy), and fails once not healthy 3 s after it was placed.
 */
function spec(pkg: string, autoRevert: boolean, failing: boolean) {
  return parseJobSpec({
    name: 'web',
    package: pkg,
    count: 2,
    update: {
      max_parallel: 1,
      min_healthy_time_secs: failing ? 60 : 1,
      health_check: { deadline_secs: 3 },
      auto_revert: autoRevert,
    },
  });
}

const phases = (p: TestPlane): string[] =>
  p.chain.find({ kind: 'workload.job' }).map((e) => (e.payload as { phase: string }).phase);

/** Runs version 1 (healthy) to completion. */
async function healthyV1(p: TestPlane, clock: Clock, autoRevert: boolean): Promise<void> {
  await p.plane.runJob(spec(await nativePackage(false), autoRevert, false));
  await tickUntil(p, () => runningOf(p, 'web').length === 2);
  clock.advance(1_500);
  await tickUntil(p, () => p.plane.job('web').rollout === 'complete', 12, 300);
  expect(p.plane.job('web')).toMatchObject({ version: 1, stable_version: 1, healthy: 2 });
}

/** Ticks (moving the clock past the health deadline) until the job's rollout leaves `rolling` at version 2. */
async function untilV2Ends(p: TestPlane, clock: Clock): Promise<void> {
  for (
    let i = 0;
    i < 12 && p.plane.job('web').version === 2 && p.plane.job('web').rollout === 'rolling';
    i++
  ) {
    await new Promise((r) => setTimeout(r, 300));
    clock.advance(1_000);
    await p.plane.tick();
  }
}

describe('jobs: rolling updates', () => {
  it('a new version whose health check fails reverts on its own to the last healthy one (chained)', async () => {
    const clock = new Clock();
    const hs = await hosts(3, ['native'], SUPERVISOR);
    const p = await planeWith(hs, clock);
    await healthyV1(p, clock, true);
    const v1 = runningOf(p, 'web')
      .map((i) => i.instance_id)
      .sort();

    await p.plane.runJob(spec(await nativePackage(true), true, true));
    await p.plane.tick();
    // max_parallel 1: one replacement placed; both version 1 instances stay until it is healthy.
    const during = p.plane.job('web');
    expect(during.instances.filter((i) => i.version === 2)).toHaveLength(1);
    expect(
      during.instances
        .filter((i) => i.version === 1)
        .map((i) => i.instance_id)
        .sort(),
    ).toEqual(v1);

    await untilV2Ends(p, clock);
    const reverted = p.plane.job('web');
    expect(reverted).toMatchObject({ version: 3, rollout: 'rolling' });
    expect(reverted.detail).toMatch(/^version 2 failed its health check: .*; reverted to version 1$/);
    const history = p.plane.jobHistory('web');
    expect(history.map((v) => [v.version, v.cause, v.reverted_from, v.current])).toEqual([
      [1, 'run', null, false],
      [2, 'run', null, false],
      [3, 'auto_revert', 1, true],
    ]);
    expect(history[2]?.spec_hash).toBe(history[0]?.spec_hash);

    // Version 3 runs what version 1 ran: its instances are adopted in place, the failed one removed.
    clock.advance(1_500);
    await tickUntil(p, () => p.plane.job('web').rollout === 'complete', 12, 300);
    const done = p.plane.job('web');
    expect(done.instances.map((i) => [i.version, i.state])).toEqual([
      [3, 'running'],
      [3, 'running'],
    ]);
    expect(done.instances.map((i) => i.instance_id).sort()).toEqual(v1);
    expect(done.stable_version).toBe(3);
    expect(phases(p)).toEqual(['run', 'rollout_complete', 'run', 'auto_revert', 'rollout_complete']);
    const revert = p.chain.find({ kind: 'workload.job' })[3]?.payload as Record<string, unknown>;
    expect(revert).toMatchObject({
      job: 'web',
      version: 3,
      reverted_from: 1,
      spec_hash: history[0]?.spec_hash,
    });
  }, 90_000);

  it('with auto_revert false the update stops and the job shows failed; a revert to a given version recovers it', async () => {
    const clock = new Clock();
    const hs = await hosts(3, ['native'], SUPERVISOR);
    const p = await planeWith(hs, clock);
    await healthyV1(p, clock, false);
    await p.plane.runJob(spec(await nativePackage(true), false, true));
    await p.plane.tick();
    await untilV2Ends(p, clock);
    const failed = p.plane.job('web');
    expect(failed).toMatchObject({ version: 2, rollout: 'failed', stable_version: 1 });
    expect(failed.detail).toMatch(/^version 2 failed its health check/);
    // Nothing more of version 2 is placed (max_parallel 1: at most the one it failed with is left);
    // version 1's instances keep running.
    clock.advance(5_000);
    await p.plane.tick();
    await p.plane.tick();
    expect(p.plane.job('web').instances.filter((i) => i.version === 1 && i.state === 'running')).toHaveLength(
      2,
    );
    expect(p.plane.job('web').instances.filter((i) => i.version === 2).length).toBeLessThanOrEqual(1);
    expect(p.plane.job('web').rollout).toBe('failed');

    const r = await p.plane.revertJob('web', 1);
    expect(r.job).toMatchObject({ version: 3, rollout: 'rolling' });
    clock.advance(1_500);
    await tickUntil(p, () => p.plane.job('web').rollout === 'complete', 12, 300);
    expect(p.plane.jobHistory('web').map((v) => [v.version, v.cause, v.reverted_from])).toEqual([
      [1, 'run', null],
      [2, 'run', null],
      [3, 'revert', 1],
    ]);
    expect(phases(p)).toEqual([
      'run',
      'rollout_complete',
      'run',
      'rollout_failed',
      'revert',
      'rollout_complete',
    ]);
    await expect(p.plane.revertJob('web', 9)).rejects.toMatchObject({ code: 'unknown_job_version' });

    // Stop takes every instance down at once and forgets it; the job stays, stopped.
    const ids = p.plane.job('web').instances.map((i) => i.instance_id);
    const stopped = await p.plane.stopJob('web');
    expect(stopped).toMatchObject({ status: 'stopped', desired: 0, instances: [] });
    for (const id of ids) expect(p.plane.instance(id).state).toBe('unloaded');
    for (const h of hs) expect(h.service.instanceIds()).toEqual([]);
    await p.plane.tick();
    expect(p.plane.instances().filter((i) => i.state === 'running')).toEqual([]);
    expect(phases(p).at(-1)).toBe('stop');
  }, 90_000);
});

describe('jobs: a failed automatic revert', () => {
  it('is not reverted again: the rollout fails, naming why (no version made)', async () => {
    const clock = new Clock();
    const p = await planeWith([], clock);
    const hash = 'e'.repeat(64);
    const spec1 = parseJobSpec({ name: 'web', manifest_hash: hash, update: { auto_revert: true } });
    const version = (n: number, cause: 'run' | 'auto_revert') => ({
      job: 'web',
      version: n,
      spec: spec1,
      spec_hash: 'f'.repeat(64),
      manifest_hash: hash,
      workload: 'hello-cog',
      workload_version: '1.0.0',
      cause,
      reverted_from: cause === 'run' ? null : 1,
      actor: null,
      created_at_ms: 1,
    });
    p.store.putJobVersion(version(1, 'run'));
    p.store.putJobVersion(version(2, 'run'));
    p.store.putJobVersion(version(3, 'auto_revert'));
    p.store.putJob({
      name: 'web',
      version: 3,
      status: 'running',
      rollout: 'rolling',
      stable_version: 1,
      blocked: null,
      detail: null,
      created_at_ms: 1,
      updated_at_ms: 1,
    });
    // An instance of version 3 that failed (its placement says so).
    p.store.putPlacement({
      instance_id: 'hello-cog-0000000000000001',
      node_id: 'a'.repeat(32),
      order_id: 'o-1',
      decision_id: 'd'.repeat(64),
      workload: 'hello-cog',
      version: '1.0.0',
      variant: 'x86_64-native',
      runtime: 'native',
      manifest_hash: hash,
      package_id: 'p',
      signer_keys: [],
      artifact_hashes: [],
      state: 'failed',
      desired_running: true,
      placed_at_ms: 1,
      updated_at_ms: 1,
    });
    p.store.putJobInstance({
      instance_id: 'hello-cog-0000000000000001',
      job: 'web',
      version: 3,
      node_id: 'a'.repeat(32),
      order_id: 'o-1',
      placed_at_ms: 1,
      healthy_at_ms: null,
    });
    await p.plane.tick();
    const job = p.plane.job('web');
    expect(job).toMatchObject({ version: 3, rollout: 'failed' });
    expect(job.detail).toMatch(/it was itself an automatic revert, so it is not reverted again$/);
    expect(p.plane.jobHistory('web')).toHaveLength(3);
    expect(phases(p)).toEqual(['rollout_failed']);
  }, 30_000);
});
