import { parsePolicy } from '@heddle/gate';
import { afterEach, describe, expect, it } from 'vitest';
import { type PlaneEvent, PlaneEvents } from './plane-events.js';
import { eventingStore } from './plane-events-store.js';
import { SqliteStateStore } from './sqlite-store.js';
import type { PlacementRecord } from './state-store.js';
import {
  examplePackage,
  openPlane,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

const open: { close(): Promise<void> | void }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

describe('PlaneEvents', () => {
  it('numbers events per epoch, tells subscribers in order, and ignores a throwing subscriber', () => {
    const bus = new PlaneEvents({ epoch: 'abcd', now: () => 7 });
    const seen: string[] = [];
    bus.subscribe(() => {
      throw new Error('a broken subscriber');
    });
    const off = bus.subscribe((e) => seen.push(`${e.id} ${e.type}`));
    expect(bus.lastId).toBeNull();
    const e = bus.publish('node.removed', { node_id: 'n1' });
    expect(e).toEqual({ id: 'abcd-1', type: 'node.removed', at_ms: 7, data: { node_id: 'n1' } });
    off();
    bus.publish('node.removed', { node_id: 'n2' });
    expect(seen).toEqual(['abcd-1 node.removed']);
    expect(bus.lastId).toBe('abcd-2');
    expect(bus.subscribers).toBe(1);
  });

  it('resumes after an id still in the ring; says incomplete for an evicted, foreign, future or junk id', () => {
    const bus = new PlaneEvents({ epoch: 'ee', ringSize: 3 });
    for (let i = 1; i <= 5; i++) bus.publish('node.removed', { node_id: `n${i}` });
    // The ring holds ee-3..ee-5.
    expect(bus.since('ee-2')).toEqual({ events: bus.recent(), complete: true });
    expect(bus.since('ee-4').events.map((e) => e.id)).toEqual(['ee-5']);
    expect(bus.since('ee-5')).toEqual({ events: [], complete: true });
    expect(new PlaneEvents({ epoch: 'ee' }).since('ee-0')).toEqual({ events: [], complete: true });
    for (const id of ['ee-1', 'ee-0', 'ff-4', 'ee-6', 'junk', '', 'ee-01']) {
      const r = bus.since(id);
      expect(r.complete, id).toBe(false);
      expect(r.events.map((e) => e.id)).toEqual(['ee-3', 'ee-4', 'ee-5']);
    }
  });
});

const placement = (over: Partial<PlacementRecord> = {}): PlacementRecord => ({
  instance_id: 'i-1',
  node_id: 'n-1',
  order_id: 'o-1',
  decision_id: 'd-1',
  workload: 'w',
  version: '1.0.0',
  variant: 'wasi',
  runtime: 'wasi',
  manifest_hash: 'm',
  package_id: 'p',
  signer_keys: [],
  artifact_hashes: [],
  state: 'placed',
  desired_running: false,
  placed_at_ms: 1,
  updated_at_ms: 1,
  ...over,
});

describe('eventingStore', () => {
  async function store() {
    const dir = tempDir();
    const inner = SqliteStateStore.open(`${dir}/state.db`);
    open.push({ close: () => inner.close() });
    const bus = new PlaneEvents();
    const seen: PlaneEvent[] = [];
    bus.subscribe((e) => seen.push(e));
    return { s: eventingStore(inner, bus), seen };
  }

  it('publishes placed, state changes and reschedules; nothing for a write that changes no state', async () => {
    const { s, seen } = await store();
    s.putPlacement(placement());
    s.putPlacement(placement({ updated_at_ms: 2 }));
    s.putPlacement(placement({ state: 'running' }));
    s.putPlacement(placement({ instance_id: 'i-2', replaces: 'i-1', reschedules: 1 }));
    s.removePlacement('i-2');
    expect(seen.map((e) => e.type)).toEqual([
      'instance.placed',
      'instance.state_changed',
      'instance.placed',
      'instance.rescheduled',
      'instance.removed',
    ]);
    expect(seen[1]?.data).toEqual({
      instance_id: 'i-1',
      node_id: 'n-1',
      workload: 'w',
      from: 'placed',
      to: 'running',
    });
  });

  it('holds events until the outermost transaction commits, and drops those of a transaction that throws', async () => {
    const { s, seen } = await store();
    s.transaction(() => {
      s.putPlacement(placement());
      try {
        s.transaction(() => {
          s.putPlacement(placement({ instance_id: 'i-rolled-back' }));
          throw new Error('inner fails');
        });
      } catch {
        // the inner writes are rolled back, the outer ones stay
      }
      expect(seen).toEqual([]);
    });
    expect(seen.map((e) => e.data)).toEqual([expect.objectContaining({ instance_id: 'i-1' })]);
    expect(() =>
      s.transaction(() => {
        s.putPlacement(placement({ instance_id: 'i-3' }));
        throw new Error('outer fails');
      }),
    ).toThrow('outer fails');
    expect(s.getPlacement('i-3')).toBeUndefined();
    expect(seen).toHaveLength(1);
  });
});

describe('a plane publishes its changes', () => {
  it('node joined, instance placed and stopped, liveness dead, alert opened and closed', async () => {
    let offset = 0;
    const now = () => Date.now() + offset;
    const h: TestHost = await startHost(['wasi']);
    open.push(h);
    const p: TestPlane = await openPlane(undefined, { deadAfterMs: 1_000, suspectAfterMs: 500 }, now);
    open.push(p);
    const seen: PlaneEvent[] = [];
    p.plane.events.subscribe((e) => seen.push(e));
    await p.plane.addNode(h.url, { tier: 'paired' });
    const dir = await examplePackage('wasi-cog', false, true);
    const r = await p.plane.place({
      package_dir: dir,
      mode: { type: 'interval', secs: 60 },
      start: true,
      node: h.service.nodeId,
    });
    const id = r.instance?.instance_id as string;
    await p.plane.stop(id);
    await p.plane.start(id);
    await h.server.close();
    await p.plane.tick();
    offset += 1_100;
    await p.plane.tick();
    const alert = p.plane.alerts()[0];
    await p.plane.ackAlert(alert?.alert_id as string);
    const types = seen.map((e) => e.type);
    expect(types[0]).toBe('node.joined');
    expect(types).toContain('instance.placed');
    const states = seen.flatMap((e) => (e.type === 'instance.state_changed' ? [e.data.to] : []));
    expect(states).toContain('stopped');
    expect(states.at(-1)).toBe('lost');
    const liveness = seen.flatMap((e) => (e.type === 'node.liveness_changed' ? [e.data.to] : []));
    expect(liveness[0]).toBe('alive');
    expect(liveness.at(-1)).toBe('dead');
    expect(types.filter((t) => t.startsWith('alert.'))).toEqual(['alert.opened', 'alert.closed']);
    // Ids increase by one from the first.
    const seqs = seen.map((e) => Number(e.id.split('-')[1]));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});

describe('approvals and decisions', () => {
  it('a deferred place publishes approval.pending; approving it approval.approved, approval.updated and instance.placed; its explanation is kept', async () => {
    const policy = parsePolicy({
      version: 1,
      name: 'defer',
      rules: [
        { id: 'ask', effect: 'defer', actions: ['workload.place'], reason: 'places need an operator' },
        {
          id: 'all',
          effect: 'permit',
          actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
          kinds: ['cog'],
          max_network: 'egress',
        },
      ],
    });
    const h: TestHost = await startHost(['wasi']);
    open.push(h);
    const p: TestPlane = await openPlane(undefined, {}, undefined, { policy, approvals: {} });
    open.push(p);
    await p.plane.addNode(h.url, { tier: 'paired' });
    const seen: PlaneEvent[] = [];
    p.plane.events.subscribe((e) => seen.push(e));
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog', false, true) });
    expect(r.status).toBe('awaiting_approval');
    expect(seen.map((e) => e.type)).toEqual(['approval.pending']);
    expect(seen[0]?.data).toEqual({
      approval_id: r.approval_id,
      state: 'pending',
      workload: 'wasi-cog',
      node_id: h.service.nodeId,
      by: null,
      place_status: 'held',
    });
    await p.plane.approve(r.approval_id as string, 'operator-test');
    const types = seen.map((e) => e.type);
    expect(types).toContain('approval.approved');
    expect(types).toContain('instance.placed');
    expect(types.at(-1)).toBe('approval.updated');
    expect(seen.at(-1)?.data).toMatchObject({
      state: 'approved',
      by: 'operator-test',
      place_status: 'placed',
    });

    // An ordinary place's explanation is kept by its decision id.
    const open2 = await openPlane();
    open.push(open2);
    await open2.plane.addNode(h.url, { tier: 'paired' });
    const placed = await open2.plane.place({ package_dir: await examplePackage('wasi-cog', false, true) });
    expect(open2.plane.explanation(placed.decision_id as string)).toEqual(placed.explanation);
    expect(open2.plane.explanation('0'.repeat(64))).toBeUndefined();
  });
});
