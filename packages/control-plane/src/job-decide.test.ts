import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideJob, type JobDecideInput, type LiveJobInstance } from './job-decide.js';

const node = (i: number): string => i.toString(16).padStart(32, '0');

function inst(id: string, n: number, version: number, healthy = true, same = false, at = 0): LiveJobInstance {
  return { instance_id: id, node_id: node(n), version, healthy, same, placed_at_ms: at };
}

function fits(count: number, unfit: Record<number, string> = {}): Map<string, string | null> {
  return new Map(Array.from({ length: count }, (_, i) => [node(i), unfit[i] ?? null]));
}

const base: JobDecideInput = {
  type: 'service',
  count: 3,
  version: 2,
  fits: fits(5),
  instances: [],
  maxParallel: 1,
  failed: false,
};

describe('decideJob', () => {
  it('places every missing instance of a new job at once', () => {
    expect(decideJob(base)).toEqual({
      adopt: [],
      place: [
        { node: null, replaces: null },
        { node: null, replaces: null },
        { node: null, replaces: null },
      ],
      remove: [],
    });
  });

  it('rolls max_parallel at a time, removing an old instance only once a new one is healthy', () => {
    const old = [inst('a', 0, 1), inst('b', 1, 1), inst('c', 2, 1)];
    expect(decideJob({ ...base, instances: old }).place).toEqual([{ node: null, replaces: 'a' }]);
    const inflight = [...old, inst('n1', 3, 2, false)];
    expect(decideJob({ ...base, instances: inflight })).toEqual({ adopt: [], place: [], remove: [] });
    const healthy = [...old, inst('n1', 3, 2, true)];
    const d = decideJob({ ...base, instances: healthy });
    expect(d.remove.map((r) => r.instance_id)).toEqual(['a']);
    expect(d.place).toEqual([{ node: null, replaces: 'b' }]);
  });

  it('restores lost capacity at once, whatever max_parallel', () => {
    const d = decideJob({ ...base, instances: [inst('a', 0, 1)] });
    expect(d.place.filter((p) => p.replaces === null)).toHaveLength(2);
    expect(d.place.filter((p) => p.replaces !== null)).toHaveLength(0);
  });

  it('adopts an old instance that runs the same thing, and replaces one on a node that no longer fits', () => {
    const d = decideJob({
      ...base,
      count: 2,
      fits: fits(4, { 1: 'node is cordoned' }),
      instances: [inst('a', 0, 1, true, true), inst('b', 1, 2)],
    });
    expect(d.adopt).toEqual(['a']);
    expect(d.remove).toEqual([
      { instance_id: 'b', node_id: node(1), version: 2, reason: 'node is cordoned' },
    ]);
    expect(d.place).toEqual([{ node: null, replaces: null }]);
  });

  it('removes surplus instances, unhealthy ones first', () => {
    const d = decideJob({
      ...base,
      count: 1,
      instances: [inst('a', 0, 2, true, false, 1), inst('b', 1, 2, false, false, 0)],
    });
    expect(d.remove.map((r) => r.instance_id)).toEqual(['b']);
  });

  it('places nothing of a failed rollout', () => {
    expect(decideJob({ ...base, failed: true }).place).toEqual([]);
  });

  it('a system job: one pinned instance on every fitting node, replaced node by node', () => {
    const sys = { ...base, type: 'system' as const, fits: fits(3, { 2: 'node is dead' }) };
    expect(decideJob(sys).place).toEqual([
      { node: node(0), replaces: null },
      { node: node(1), replaces: null },
    ]);
    const rolling = decideJob({ ...sys, instances: [inst('a', 0, 1), inst('b', 1, 1), inst('c', 2, 1)] });
    expect(rolling.place).toEqual([{ node: node(0), replaces: 'a' }]);
    expect(rolling.remove.map((r) => [r.instance_id, r.reason])).toEqual([['c', 'node is dead']]);
    const done = decideJob({ ...sys, instances: [inst('a', 0, 1), inst('n', 0, 2, true)] });
    expect(done.remove.map((r) => r.instance_id)).toEqual(['a']);
    expect(done.place).toEqual([{ node: node(1), replaces: null }]);
  });

  it('never exceeds its bounds, whatever the instances (property)', () => {
    const arb = fc.record({
      type: fc.constantFrom<'service' | 'system'>('service', 'system'),
      count: fc.integer({ min: 1, max: 6 }),
      nodes: fc.integer({ min: 1, max: 8 }),
      unfit: fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 3 }),
      maxParallel: fc.integer({ min: 1, max: 3 }),
      instances: fc.array(
        fc.record({
          n: fc.integer({ min: 0, max: 9 }),
          version: fc.integer({ min: 1, max: 2 }),
          healthy: fc.boolean(),
          same: fc.boolean(),
        }),
        { maxLength: 10 },
      ),
    });
    fc.assert(
      fc.property(arb, (a) => {
        const f = fits(a.nodes, Object.fromEntries(a.unfit.map((u) => [u, 'unfit'])));
        const instances = a.instances.map((i, k) => inst(`i${k}`, i.n, i.version, i.healthy, i.same, k));
        const input: JobDecideInput = { ...base, ...a, fits: f, instances };
        const d = decideJob(input);
        const removed = new Set(d.remove.map((r) => r.instance_id));
        const ids = new Set(instances.map((i) => i.instance_id));
        // Only known instances are removed, each once.
        expect(removed.size).toBe(d.remove.length);
        for (const r of removed) expect(ids.has(r)).toBe(true);
        // Every instance on a node that does not fit goes.
        for (const i of instances)
          if (f.get(i.node_id) !== null) expect(removed.has(i.instance_id)).toBe(true);
        const replacements = d.place.filter((p) => p.replaces !== null).length;
        expect(replacements).toBeLessThanOrEqual(a.maxParallel);
        if (a.type === 'system') {
          for (const p of d.place) expect(f.get(p.node ?? '')).toBeNull();
          expect(new Set(d.place.map((p) => p.node)).size).toBe(d.place.length);
        } else {
          for (const p of d.place) expect(p.node).toBeNull();
          const keptCurrent = instances.filter(
            (i) => (i.version === 2 || d.adopt.includes(i.instance_id)) && !removed.has(i.instance_id),
          ).length;
          expect(keptCurrent + d.place.length).toBeLessThanOrEqual(a.count);
          // An old instance is removed only when healthy new ones stand in for it (or its node does not fit).
          const healthyNew = instances.filter(
            (i) =>
              (i.version === 2 || d.adopt.includes(i.instance_id)) &&
              i.healthy &&
              !removed.has(i.instance_id),
          ).length;
          const oldLeft = instances.filter(
            (i) => i.version === 1 && !d.adopt.includes(i.instance_id) && !removed.has(i.instance_id),
          ).length;
          const oldRemovedFit = d.remove.filter((r) => r.version === 1 && f.get(r.node_id) === null).length;
          if (oldRemovedFit > 0) expect(healthyNew + oldLeft).toBeGreaterThanOrEqual(a.count);
        }
      }),
      { numRuns: 500 },
    );
  });
});
