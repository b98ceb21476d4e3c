import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parsePolicy } from '@heddle/gate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalEvent } from './approval-view.js';
import {
  examplePackage,
  openPlane,
  planeError,
  startHost,
  type TestHost,
  type TestPlane,
  tempDir,
} from './test-fixtures.js';

// A place the policy defers is held under an approval request (real host, real chain, the
// crash-safe approval file), and an operator's approval, rejection or its expiry decides it.

/** Every place of a cog is deferred to an operator (the defer wins over the permit). */
const DEFER_PLACES = parsePolicy({
  version: 1,
  name: 'defer-places',
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

let host: TestHost;
let pkg: string;
let dir: string;
let p: TestPlane;
const events: ApprovalEvent[] = [];

beforeAll(async () => {
  host = await startHost(['wasi']);
  pkg = await examplePackage('wasi-cog');
  dir = tempDir();
  p = await openPlane(dir, {}, undefined, { policy: DEFER_PLACES, approvals: {} });
  p.plane.onApproval((e) => events.push(e));
  await p.plane.addNode(host.url, { tier: 'paired' });
});
afterAll(async () => {
  await p.close();
  await host.close();
});

describe('a deferred place', () => {
  let approvalId = '';

  it('is held under an approval request: nothing is placed, the defer is chained and stored', async () => {
    const before = p.plane.instances().length;
    const r = await p.plane.place({ package_dir: pkg });
    expect(r.status).toBe('awaiting_approval');
    approvalId = r.approval_id ?? '';
    expect(approvalId).toMatch(/^[0-9a-f]{32}$/);
    expect(r.instance).toBeNull();
    expect(p.plane.instances()).toHaveLength(before);
    const [a] = await p.plane.approvals('pending');
    expect(a).toMatchObject({
      approval_id: approvalId,
      state: 'pending',
      action: 'workload.place',
      rule: 'ask',
      place: { status: 'held', node_id: host.service.nodeId, workload: 'wasi-cog' },
    });
    expect(p.chain.getByHash(a?.defer_event ?? '')?.payload).toMatchObject({ verdict: 'defer' });
    expect(existsSync(join(dir, 'approvals.json'))).toBe(true);
    expect(existsSync(join(dir, 'held-places.json'))).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['requested']);
  });

  it('survives a controller restart, and an approval places it through the engine, the approver chained', async () => {
    await p.close();
    p = await openPlane(dir, {}, undefined, { policy: DEFER_PLACES, approvals: {} });
    p.plane.onApproval((e) => events.push(e));
    await p.plane.refreshNodes(); // a restarted controller knows its nodes' liveness again
    expect((await p.plane.approval(approvalId)).state).toBe('pending');
    const v = await p.plane.approve(approvalId, 'alice', 'looks fine');
    expect(v.place?.detail ?? null).toBeNull();
    expect(v).toMatchObject({
      state: 'approved',
      decided_by: 'alice',
      note: 'looks fine',
      outcome: { verdict: 'permit', rule: 'ask' },
      place: { status: 'placed', node_id: host.service.nodeId },
    });
    const inst = p.plane.instance(v.place?.instance_id ?? '');
    expect(inst.node_id).toBe(host.service.nodeId);
    expect(inst.order_id).toBe(v.place?.order_id);
    // The approval is chained with its approver and note; the placement decision names the approval.
    const resolution = p.chain.getByHash(v.resolution_event ?? '');
    expect(resolution?.payload).toMatchObject({ verdict: 'permit', approval: { decided_by: 'alice' } });
    const decision = p.chain.getByHash(inst.decision_id);
    expect(decision?.payload).toMatchObject({
      phase: 'decision',
      approval_id: approvalId,
      approval_event: v.resolution_event,
    });
    expect(events.map((e) => e.kind).slice(-2)).toEqual(['approved', 'placed']);
    // Decided once: a second approval is refused.
    await expect(p.plane.approve(approvalId, 'bob')).rejects.toMatchObject({
      code: 'approval_already_decided',
    });
  });

  it('a rejection refuses it: nothing placed, the rejection chained', async () => {
    const before = p.plane.instances().length;
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog') });
    const v = await p.plane.reject(r.approval_id ?? '', 'carol', 'not today');
    expect(v).toMatchObject({
      state: 'rejected',
      decided_by: 'carol',
      place: { status: 'refused', detail: 'rejected by carol: not today' },
    });
    expect(p.chain.getByHash(v.resolution_event ?? '')?.payload).toMatchObject({ verdict: 'deny' });
    expect(p.plane.instances()).toHaveLength(before);
    expect(events.at(-1)?.kind).toBe('rejected');
  });

  it('unknown and malformed ids are approval_not_found', async () => {
    expect((await planeError(p.plane.approval('../etc'))).code).toBe('approval_not_found');
    await expect(p.plane.approve('ab'.repeat(16), 'alice')).rejects.toMatchObject({
      code: 'approval_not_found',
    });
  });
});

describe('an approval nobody decides', () => {
  it("expires when the defer rule's approval_ttl_secs runs out: the tick expires it, the place is not made", async () => {
    const policy = parsePolicy({
      ...DEFER_PLACES,
      rules: DEFER_PLACES.rules.map((r) => (r.id === 'ask' ? { ...r, approval_ttl_secs: 1 } : r)),
    });
    p.gate.setPolicy(policy);
    const before = p.plane.instances().length;
    const r = await p.plane.place({ package_dir: await examplePackage('wasi-cog') });
    const id = r.approval_id ?? '';
    const held = await p.plane.approval(id);
    expect(held.expires_at_ms - held.created_at_ms).toBe(1_000);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await p.plane.tick();
    expect(events.at(-1)).toMatchObject({ kind: 'expired', approval: { approval_id: id } });
    const v = await p.plane.approval(id);
    expect(v).toMatchObject({ state: 'expired', place: { status: 'expired' } });
    expect(p.chain.getByHash(v.resolution_event ?? '')?.payload).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:approval_expired',
    });
    await expect(p.plane.approve(id, 'alice')).rejects.toMatchObject({ code: 'approval_expired' });
    expect(p.plane.instances()).toHaveLength(before);
    p.gate.setPolicy(DEFER_PLACES);
  });
});

describe('without an approval queue', () => {
  it('a defer refuses the place as before (unplaceable, the defer named)', async () => {
    const q = await openPlane(tempDir(), {}, undefined, { policy: DEFER_PLACES });
    try {
      await q.plane.addNode(host.url, { tier: 'paired' });
      const err = await planeError(q.plane.place({ package_dir: pkg }));
      expect(err.code).toBe('unplaceable');
      expect(Object.values(err.reasons).join()).toMatch(/defer: places need an operator/);
      expect(await q.plane.approvals()).toEqual([]);
      expect((await planeError(q.plane.approve('ab'.repeat(16), 'alice'))).code).toBe('approvals_disabled');
    } finally {
      await q.close();
    }
  });
});
