import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  examplePackage,
  openPlane,
  planeError,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

// Node labels, constraints, spread, cordon and drain against three real hosts: labels and cordon are
// kept in the state database (a restarted controller has them), the engine honours them and says why.

let hosts: TestHost[];
let dir: string;
let p: TestPlane;
let pkg: string;
let kitchen1 = '';
let hall = '';
let kitchen2 = '';
let interval = 10;

/** A fresh order of the package (a new interval makes a distinct instance). */
const order = (more: Record<string, unknown> = {}) => ({
  package_dir: pkg,
  mode: { type: 'interval' as const, secs: interval++ },
  ...more,
});

const roomOf = (nodeId: string): string => p.plane.node(nodeId).labels.room ?? '-';

beforeAll(async () => {
  hosts = await Promise.all([startHost(['wasi']), startHost(['wasi']), startHost(['wasi'])]);
  pkg = await examplePackage('wasi-cog');
  dir = tempDir();
  p = await openPlane(dir);
  [kitchen1, hall, kitchen2] = hosts.map((h) => h.service.nodeId) as [string, string, string];
  for (const h of hosts) await p.plane.addNode(h.url, { tier: 'paired' });
});
afterAll(async () => {
  await p.close();
  await Promise.all(hosts.map((h) => h.close()));
});

describe('labels', () => {
  it('are set and removed, checked, chained, and shown on the node', async () => {
    await p.plane.labelNode(kitchen1, { set: { room: 'kitchen', camera: 'yes' } });
    await p.plane.labelNode(kitchen2, { set: { room: 'kitchen' } });
    await p.plane.labelNode(hall, { set: { room: 'hall', camera: 'no' } });
    const h = await p.plane.labelNode(hall, { remove: ['camera', 'absent'] });
    expect(h.labels).toEqual({ room: 'hall' });
    const twice = await planeError(p.plane.labelNode(hall, { set: { room: 'x' }, remove: ['room'] }));
    expect([twice.code, twice.field]).toEqual(['invalid_input', 'labels']);
    expect(h.labels).toEqual({ room: 'hall' });
    expect(p.plane.node(kitchen1).labels).toEqual({ room: 'kitchen', camera: 'yes' });
    const bad = await planeError(p.plane.labelNode(hall, { set: { 'Bad Name': 'x' } }));
    expect([bad.code, bad.field]).toEqual(['invalid_input', 'labels']);
    const badValue = await planeError(p.plane.labelNode(hall, { set: { room: 'a b' } }));
    expect([badValue.code, badValue.field]).toEqual(['invalid_input', 'labels.room']);
    expect((await planeError(p.plane.labelNode('ab'.repeat(16), { set: { a: 'b' } }))).code).toBe(
      'unknown_node',
    );
    const labelled = p.chain.find({ kind: 'workload.node' }).map((e) => e.payload);
    expect(labelled.at(-1)).toMatchObject({ phase: 'label', node_id: hall, labels: { room: 'hall' } });
  });

  it('a label constraint places only on nodes that carry it; the others are rejected with labels', async () => {
    const r = await p.plane.place(order({ constraints: [{ label: 'room', value: 'hall' }] }));
    expect(r.instance?.node_id).toBe(hall);
    const rejected = r.explanation.rows.filter((row) => row.verdict === 'rejected');
    expect(rejected.map((row) => row.node_id).sort()).toEqual([kitchen1, kitchen2].sort());
    expect(rejected[0]?.failures?.[0]).toMatchObject({ constraint: 'labels' });
    const none = await planeError(p.plane.place(order({ constraints: [{ label: 'room', value: 'attic' }] })));
    expect(none.code).toBe('unplaceable');
    expect(Object.values(none.reasons).join()).toMatch(/room=kitchen, wanted attic|room=hall, wanted attic/);
  });

  it('spread over a label balances the instances of a workload across its values', async () => {
    // The hall holds one instance already: a spread place goes to the kitchen, then they even out.
    const first = await p.plane.place(order({ spread: 'room' }));
    expect(roomOf(first.instance?.node_id ?? '')).toBe('kitchen');
    for (let i = 0; i < 2; i++) await p.plane.place(order({ spread: 'room' }));
    const rooms = p.plane
      .instances()
      .filter((i) => i.workload === 'wasi-cog')
      .map((i) => roomOf(i.node_id));
    expect(rooms.filter((r) => r === 'hall')).toHaveLength(2);
    expect(rooms.filter((r) => r === 'kitchen')).toHaveLength(2);
  });
});

describe('cordon', () => {
  it('a cordoned node takes no new places (explain says cordoned), and cordon and labels survive a restart', async () => {
    const n = await p.plane.cordonNode(hall);
    expect(n.cordoned).toBe(true);
    const err = await planeError(p.plane.place(order({ constraints: [{ label: 'room', value: 'hall' }] })));
    expect(err.code).toBe('unplaceable');
    expect(err.reasons[hall]).toMatch(/cordoned/);
    const pinned = await planeError(p.plane.place(order({ node: hall })));
    expect(pinned.reasons[hall] ?? pinned.message).toMatch(/cordoned/);
    await p.close();
    p = await openPlane(dir);
    await p.plane.refreshNodes();
    expect(p.plane.node(hall)).toMatchObject({ cordoned: true, labels: { room: 'hall' } });
    expect(p.plane.node(kitchen1).labels).toEqual({ room: 'kitchen', camera: 'yes' });
    await p.plane.uncordonNode(hall);
    const back = await p.plane.place(order({ constraints: [{ label: 'room', value: 'hall' }] }));
    expect(back.instance?.node_id).toBe(hall);
    expect(
      p.chain.find({ kind: 'workload.node' }).map((e) => (e.payload as { phase: string }).phase),
    ).toEqual(expect.arrayContaining(['cordon', 'uncordon']));
  });
});

describe('drain', () => {
  it('cordons the node, moves its instances elsewhere (each move chained), leaves --no-migrate and pinned ones with an alert', async () => {
    const stay = await p.plane.place(order({ node: kitchen1, migratable: false }));
    const pinned = await p.plane.place(order({ node: kitchen1 }));
    const live = () =>
      p.plane.instances().filter((i) => i.node_id === kitchen1 && !['unloaded', 'lost'].includes(i.state));
    const movable = live().filter(
      (i) => i.instance_id !== stay.instance?.instance_id && i.instance_id !== pinned.instance?.instance_id,
    );
    expect(movable.length).toBeGreaterThan(0);
    const r = await p.plane.drainNode(kitchen1);
    expect(r.cordoned).toBe(true);
    expect(p.plane.node(kitchen1).cordoned).toBe(true);
    expect(r.moved.map((m) => m.instance_id).sort()).toEqual(movable.map((i) => i.instance_id).sort());
    for (const m of r.moved) {
      expect(m.to_node_id).not.toBe(kitchen1);
      expect(p.plane.instance(m.to_instance_id)).toMatchObject({
        node_id: m.to_node_id,
        replaces: m.instance_id,
      });
      expect(p.plane.instance(m.instance_id).state).toBe('unloaded');
    }
    const migrations = p.chain.find({ kind: 'workload.migrate' }).map((e) => e.payload);
    for (const m of r.moved) {
      expect(migrations).toContainEqual(
        expect.objectContaining({
          phase: 'drain',
          instance_id: m.instance_id,
          to_instance_id: m.to_instance_id,
        }),
      );
    }
    // What may not move stays, named by an alert.
    expect(r.left.map((l) => [l.instance_id, l.reason]).sort()).toEqual(
      [
        [stay.instance?.instance_id, 'not_migratable'],
        [pinned.instance?.instance_id, 'pinned'],
      ].sort(),
    );
    const alerts = p.plane.alerts();
    for (const l of r.left) {
      expect(alerts.find((a) => a.alert_id === l.alert_id)).toMatchObject({
        instance_id: l.instance_id,
        reason: l.reason,
      });
    }
    expect(
      live()
        .map((i) => i.instance_id)
        .sort(),
    ).toEqual([stay.instance?.instance_id, pinned.instance?.instance_id].sort());
  }, 30_000);
});
