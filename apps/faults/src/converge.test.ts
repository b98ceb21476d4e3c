// The convergence diff on hand-made snapshots: each rule catches what it is for, and a converged
// snapshot (a replacement included) has no problem.
import type { PlacementRecord, UnsettledRecord } from '@heddle/control-plane';
import { describe, expect, it } from 'vitest';
import { type Acknowledged, diffSnapshot, type HostView, type Snapshot } from './converge.js';
import type { HostInstance } from './observer.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

function placement(id: string, node: string, order: string, state: string, desired = true): PlacementRecord {
  return {
    instance_id: id,
    node_id: node,
    order_id: order,
    decision_id: 'd'.repeat(64),
    workload: 'wasi-cog',
    version: '0.8.0',
    variant: 'wasm32-wasi',
    runtime: 'wasi',
    manifest_hash: 'm'.repeat(64),
    package_id: 'p'.repeat(64),
    signer_keys: [],
    artifact_hashes: [],
    state: state as PlacementRecord['state'],
    desired_running: desired,
    placed_at_ms: 0,
    updated_at_ms: 0,
  };
}

function inst(id: string, state = 'running', decision = 'd'.repeat(64)): HostInstance {
  return {
    instance_id: id,
    workload: 'wasi-cog',
    mode: { type: 'interval', secs: 101 },
    decision_id: decision,
    state,
    desired_running: true,
  };
}

function host(
  index: number,
  nodeId: string,
  instances: HostInstance[],
  natives: HostView['natives'] = [],
): HostView {
  return { index, nodeId, listing: { node: nodeId, instances, in_flight: [], departed: [] }, natives };
}

function snap(placements: PlacementRecord[], hosts: HostView[], unsettled: UnsettledRecord[] = []): Snapshot {
  return { placements, unsettled, hosts };
}

const ack = (id: string, order: string, node: string): Acknowledged => ({
  instance_id: id,
  order_id: order,
  node_id: node,
});

describe('diffSnapshot', () => {
  it('flags a second copy of an instance its host lists running once (found in the process table)', () => {
    const s = snap(
      [placement('i1', A, 'o1', 'running')],
      [
        host(
          0,
          A,
          [inst('i1')],
          [
            { instanceId: 'i1', pid: 101 },
            { instanceId: 'i1', pid: 202 },
          ],
        ),
        host(1, B, []),
      ],
    );
    expect(diffSnapshot(s, [])).toEqual([expect.stringMatching(/2 copies of i1 run \(processes 101, 202/)]);
    const once = snap(
      [placement('i1', A, 'o1', 'running')],
      [host(0, A, [inst('i1')], [{ instanceId: 'i1', pid: 101 }]), host(1, B, [])],
    );
    expect(diffSnapshot(once, [])).toEqual([]);
  });

  it('is empty when every desired instance runs once where the controller says', () => {
    const s = snap([placement('i1', A, 'o1', 'running')], [host(0, A, [inst('i1')]), host(1, B, [])]);
    expect(diffSnapshot(s, [ack('i1', 'o1', A)])).toEqual([]);
  });

  it('accepts a lost instance replaced elsewhere, and flags one replaced twice', () => {
    const replaced = [placement('i1', A, 'o1', 'lost'), placement('i2', B, 'o1', 'running')];
    const ok = snap(replaced, [host(0, A, []), host(1, B, [inst('i2')])]);
    expect(diffSnapshot(ok, [ack('i1', 'o1', A)])).toEqual([]);
    const twice = snap(
      [...replaced, placement('i3', A, 'o1', 'running')],
      [host(0, A, [inst('i3')]), host(1, B, [inst('i2')])],
    );
    expect(diffSnapshot(twice, [])).toEqual([expect.stringContaining('order o1 has 2 live instances')]);
  });

  it('flags a placement its host does not have, or does not run', () => {
    const s = snap(
      [placement('i1', A, 'o1', 'running'), placement('i2', B, 'o2', 'running')],
      [host(0, A, []), host(1, B, [inst('i2', 'exited')])],
    );
    const p = diffSnapshot(s, []);
    expect(p).toContainEqual(
      expect.stringContaining('i1 is running on aaaaaaaa for the controller, but that host does not have it'),
    );
    expect(p).toContainEqual(expect.stringContaining('i2 is meant to run on bbbbbbbb, the host says exited'));
  });

  it('flags an orphan, an unrecorded instance of an unsettled decision, and a stray native process', () => {
    const u: UnsettledRecord = {
      decision_id: 'e'.repeat(64),
      order_id: 'o9',
      node_id: B,
      expected_instance_id: null,
      variant: 'wasm32-wasi',
      since_ms: 0,
      attempts: 1,
      last_error: 'in progress',
    };
    const s = snap(
      [],
      [
        host(0, A, [inst('orphan')], [{ instanceId: 'gone', pid: 4242 }]),
        host(1, B, [inst('i9', 'running', 'e'.repeat(64))]),
      ],
      [u],
    );
    const p = diffSnapshot(s, []);
    expect(p).toContainEqual(
      expect.stringContaining('holds orphan (running): the controller has no placement for it'),
    );
    expect(p).toContainEqual(
      expect.stringContaining('holds i9 (running): its decision eeeeeeee is still unsettled'),
    );
    expect(p).toContainEqual(expect.stringContaining('native process 4242 of gone runs'));
  });

  it('flags acknowledged placements that were lost, dropped or ended', () => {
    const s = snap(
      [placement('i2', A, 'o2', 'unloaded'), placement('i3', A, 'o3', 'lost')],
      [host(0, A, [])],
    );
    const p = diffSnapshot(s, [ack('i1', 'o1', A), ack('i2', 'o2', A), ack('i3', 'o3', A)]);
    expect(p).toContainEqual(
      expect.stringContaining("acknowledged i1 (order o1) is gone from the controller's state"),
    );
    expect(p).toContainEqual(expect.stringContaining('acknowledged i2 is unloaded and nothing replaced it'));
    expect(p).toContainEqual(expect.stringContaining('acknowledged i3 is lost and nothing replaced it'));
  });

  it('accepts an acknowledged instance unloaded as an orphan once its replacement runs', () => {
    const s = snap(
      [placement('i1', A, 'o1', 'unloaded'), placement('i2', B, 'o1', 'running')],
      [host(0, A, []), host(1, B, [inst('i2')])],
    );
    expect(diffSnapshot(s, [ack('i1', 'o1', A)])).toEqual([]);
  });

  it('flags an unsettled decision without a reason, an unreadable host, and ignores retired orders', () => {
    const u: UnsettledRecord = {
      decision_id: 'f'.repeat(64),
      order_id: 'o1',
      node_id: A,
      expected_instance_id: null,
      variant: 'v',
      since_ms: 0,
      attempts: 0,
      last_error: ' ',
    };
    const down: HostView = { index: 1, nodeId: B, error: 'ECONNREFUSED', natives: [] };
    const p = diffSnapshot(
      snap([placement('i5', A, 'o5', 'lost')], [host(0, A, []), down], [u]),
      [],
      new Set(['o5']),
    );
    expect(p).toEqual([
      expect.stringContaining('host 1 (bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb) cannot be read: ECONNREFUSED'),
      expect.stringContaining('has no reason'),
    ]);
  });

  it('says only that the controller cannot be read when it cannot', () => {
    expect(diffSnapshot({ placements: [], unsettled: [], hosts: [], controllerError: 'down' }, [])).toEqual([
      'controller: cannot be read: down',
    ]);
  });
});
