import { RevocationList } from '@heddle/package';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobSpec } from './job-file.js';
import {
  Clock,
  closeOpened,
  hosts,
  JOB_TUNABLES,
  planeWith,
  runningOf,
  tickUntil,
} from './jobs.test-util.js';
import { examplePackage, operatorKeys, type TestPlane } from './test-fixtures.js';

// Declarative jobs (docs/jobs.md) against real hosts on loopback: the reconciler runs in the plane's
// lifecycle tick. The controller's clock is real time plus an offset the test advances.

afterEach(closeOpened);

const running = runningOf;
const TUNABLES = JOB_TUNABLES;

function roomOf(p: TestPlane, nodeId: string): string | undefined {
  return p.store.getNodeMeta(nodeId)?.labels.room;
}

describe('jobs: a service job', () => {
  it('places count instances spread over a label, and re-converges (spread kept) after a node dies', async () => {
    const clock = new Clock();
    const hs = await hosts(5);
    const p = await planeWith(hs, clock);
    const rooms = ['r1', 'r1', 'r2', 'r2', 'r3'];
    for (const [i, h] of hs.entries())
      await p.plane.labelNode(h.service.nodeId, { set: { room: rooms[i] ?? '' } });
    const pkg = await examplePackage('wasi-cog', false, true);
    const run = await p.plane.runJob(
      parseJobSpec({
        name: 'agg',
        package: pkg,
        mode: { type: 'interval', secs: 60 },
        count: 3,
        spread: 'room',
        update: { min_healthy_time_secs: 0 },
      }),
    );
    expect(run).toMatchObject({ changed: true, job: { version: 1, status: 'running', rollout: 'rolling' } });
    await tickUntil(p, () => running(p, 'agg').length === 3);
    const first = running(p, 'agg');
    expect(new Set(first.map((i) => roomOf(p, i.node_id)))).toEqual(new Set(['r1', 'r2', 'r3']));
    await tickUntil(p, () => p.plane.job('agg').rollout === 'complete');
    expect(p.plane.job('agg')).toMatchObject({ stable_version: 1, desired: 3, healthy: 3, blocked: null });
    // The event bus told of the job's new version and its completed rollout.
    const jobEvents = p.plane.events
      .recent()
      .filter((e) => e.type === 'job.updated')
      .map((e) => e.data);
    expect(jobEvents.at(0)).toEqual({
      job: 'agg',
      version: 1,
      status: 'running',
      rollout: 'rolling',
      blocked: null,
    });
    expect(jobEvents.at(-1)).toEqual({
      job: 'agg',
      version: 1,
      status: 'running',
      rollout: 'complete',
      blocked: null,
    });

    // The r2 node holding an instance dies: the reconciler (not the rescheduler) places its replacement
    // on the other r2 node (spread), and forgets the lost one.
    const victim = first.find((i) => roomOf(p, i.node_id) === 'r2');
    const dead = hs.find((h) => h.service.nodeId === victim?.node_id);
    if (victim === undefined || dead === undefined) throw new Error('no instance in r2');
    await dead.server.close();
    await p.plane.tick();
    clock.advance(TUNABLES.deadAfterMs + 100);
    const t = await p.plane.tick();
    expect(t.dead).toEqual([victim.node_id]);
    expect(t.lost).toEqual([victim.instance_id]);
    expect(t.rescheduled).toEqual([]);
    expect(p.plane.reschedules()).toEqual([]);
    await tickUntil(p, () => running(p, 'agg').length === 3);
    const after = running(p, 'agg');
    expect(after.map((i) => i.instance_id)).not.toContain(victim.instance_id);
    expect(new Set(after.map((i) => roomOf(p, i.node_id)))).toEqual(new Set(['r1', 'r2', 'r3']));
    expect(after.map((i) => i.node_id)).not.toContain(victim.node_id);
    // Exactly three live placements of the workload: nothing surplus.
    const live = p.plane.instances().filter((i) => i.state === 'running');
    expect(live).toHaveLength(3);
  }, 60_000);

  it('plans without acting: nothing is written, chained or placed', async () => {
    const clock = new Clock();
    const hs = await hosts(2);
    const p = await planeWith(hs, clock);
    const pkg = await examplePackage('wasi-cog', false, true);
    const chainBefore = p.chain.size;
    const spec = parseJobSpec({ name: 'web', package: pkg, mode: { type: 'interval', secs: 60 }, count: 2 });
    const plan = await p.plane.planJob(spec);
    expect(plan).toMatchObject({ name: 'web', current_version: null, next_version: 1 });
    expect(plan.changes.map((c) => c.action)).toEqual(['place', 'place']);
    const nodes = plan.changes.map((c) => c.node_id);
    expect(new Set(nodes)).toEqual(new Set(hs.map((h) => h.service.nodeId)));
    for (const c of plan.changes) expect(c.explanation?.outcome).toBe('placed');
    expect(plan.nodes.every((n) => n.eligible)).toBe(true);
    expect(p.store.listJobs()).toEqual([]);
    expect(p.store.listJobVersions('web')).toEqual([]);
    expect(p.store.listOrders()).toEqual([]);
    expect(p.store.listPlacements()).toEqual([]);
    expect(p.chain.size).toBe(chainBefore);
    for (const h of hs) expect(h.service.instanceIds()).toEqual([]);
  }, 30_000);

  it('never places a revoked package again: the job is blocked, naming the revocation', async () => {
    const clock = new Clock();
    const hs = await hosts(3);
    const p = await planeWith(hs, clock);
    const pkg = await examplePackage('wasi-cog', false, true);
    await p.plane.runJob(
      parseJobSpec({ name: 'web', package: pkg, mode: { type: 'interval', secs: 60 }, count: 2 }),
    );
    await tickUntil(p, () => running(p, 'web').length === 2);
    const first = p.plane.instance(running(p, 'web')[0]?.instance_id ?? '');
    const list = RevocationList.empty().add(
      { kind: 'package', ref: first.package_id, revokedAtMs: Date.now(), reason: 'test' },
      operatorKeys,
    );
    await p.plane.pushRevocations(list.toJSON());
    const chained = p.chain.size;
    await p.plane.tick();
    await p.plane.tick();
    const job = p.plane.job('web');
    expect(job.instances).toEqual([]);
    expect(job.blocked).toBe(`its package cannot be placed: revoked: package ${first.package_id}`);
    // Nothing was decided or placed for it: no place decision chained since the revocation.
    expect(p.chain.range(chained, p.chain.size).filter((e) => e.kind === 'workload.place')).toEqual([]);
    expect(p.plane.instances().filter((i) => i.state === 'running')).toEqual([]);
  }, 30_000);
});
