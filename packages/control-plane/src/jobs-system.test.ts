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
import { examplePackage } from './test-fixtures.js';

// A system job (docs/jobs.md): one instance on every eligible node, following nodes that join, are
// drained, die or stop fitting its constraints.

afterEach(closeOpened);

describe('jobs: a system job', () => {
  it('follows a node that joins later, a drained node and a dead node', async () => {
    const clock = new Clock();
    const [a, b, c, d] = await hosts(4);
    if (a === undefined || b === undefined || c === undefined || d === undefined) throw new Error('hosts');
    const p = await planeWith([a, b], clock);
    const pkg = await examplePackage('wasi-cog', false, true);
    await p.plane.runJob(
      parseJobSpec({
        name: 'agent',
        type: 'system',
        package: pkg,
        mode: { type: 'interval', secs: 60 },
        update: { min_healthy_time_secs: 0 },
      }),
    );
    const nodes = () => new Set(runningOf(p, 'agent').map((i) => i.node_id));
    await tickUntil(p, () => nodes().size === 2);
    expect(nodes()).toEqual(new Set([a.service.nodeId, b.service.nodeId]));

    // A node joins: it gets its instance at the next tick.
    await p.plane.addNode(c.url, { tier: 'paired' });
    await tickUntil(p, () => nodes().size === 3);
    expect(nodes().has(c.service.nodeId)).toBe(true);
    expect(p.plane.job('agent').desired).toBe(3);

    // A drained node: the drain leaves the job's instance to the reconciler, which takes it down.
    const drain = await p.plane.drainNode(b.service.nodeId);
    expect(drain.left.map((l) => l.reason)).toEqual(['job']);
    expect(drain.moved).toEqual([]);
    expect(nodes()).toEqual(new Set([a.service.nodeId, c.service.nodeId]));
    expect(b.service.instanceIds()).toEqual([]);
    expect(p.plane.job('agent').desired).toBe(2);

    // A node dies: its instance is forgotten (not rescheduled), the job wants one fewer.
    await c.server.close();
    await p.plane.tick();
    clock.advance(JOB_TUNABLES.deadAfterMs + 100);
    const t = await p.plane.tick();
    expect(t.dead).toEqual([c.service.nodeId]);
    expect(t.rescheduled).toEqual([]);
    expect(nodes()).toEqual(new Set([a.service.nodeId]));
    expect(p.plane.job('agent').instances.map((i) => i.node_id)).toEqual([a.service.nodeId]);
    expect(p.plane.job('agent').desired).toBe(1);

    // A node with a label the job does not want joins: it gets nothing.
    await p.plane.addNode(d.url, { tier: 'paired' });
    await p.plane.labelNode(a.service.nodeId, { set: { camera: 'yes' } });
    await p.plane.runJob(
      parseJobSpec({
        name: 'cam',
        type: 'system',
        package: pkg,
        mode: { type: 'interval', secs: 60 },
        constraints: { labels: { camera: 'yes' } },
        update: { min_healthy_time_secs: 0 },
      }),
    );
    // The same package, values and mode as job agent's instance on that node: the identical instance,
    // which a node holds once (docs/jobs.md): the job is blocked, naming why.
    await p.plane.tick();
    expect(p.plane.job('cam').blocked).toContain('already holds the identical instance');
    await p.plane.tick();
    expect(runningOf(p, 'cam')).toEqual([]);
    const other = await examplePackage('wasi-cog', false, true);
    await p.plane.runJob(
      parseJobSpec({
        name: 'cam',
        type: 'system',
        package: other,
        mode: { type: 'interval', secs: 60 },
        constraints: { labels: { camera: 'yes' } },
        update: { min_healthy_time_secs: 0 },
      }),
    );
    await tickUntil(p, () => runningOf(p, 'cam').length === 1);
    await p.plane.tick();
    expect(runningOf(p, 'cam').map((i) => i.node_id)).toEqual([a.service.nodeId]);
    expect(p.plane.job('cam')).toMatchObject({ version: 2, blocked: null });
    const plan = await p.plane.planJob(
      parseJobSpec({
        name: 'cam',
        type: 'system',
        package: other,
        mode: { type: 'interval', secs: 60 },
        constraints: { labels: { camera: 'yes' } },
        update: { min_healthy_time_secs: 0 },
      }),
    );
    expect(plan.next_version).toBeNull();
    expect(plan.changes).toEqual([]);
    expect(plan.nodes.find((n) => n.node_id === d.service.nodeId)).toEqual({
      node_id: d.service.nodeId,
      eligible: false,
      reason: 'node has no label camera',
    });
  }, 60_000);
});
