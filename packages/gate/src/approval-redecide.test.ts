import { describe, expect, it } from 'vitest';
import { ApprovalQueue } from './approval-queue.js';
import { MemoryApprovalStore } from './approval-store.js';
import { ManualClock } from './clock.js';
import { Gate } from './gate.js';
import { parsePolicy } from './policy.js';
import { RevocationSet } from './revocation.js';
import { ctx, policyOf, TestRecorder } from './test-util.js';

const EGRESS = ctx({ network: 'egress' });

const deferEgress = parsePolicy(
  policyOf(
    { id: 'egress-asks', effect: 'defer', actions: ['workload.place'], min_network: 'egress' },
    { id: 'cogs', effect: 'permit', actions: ['workload.*'], kinds: ['cog'], min_node_tier: 'paired' },
  ),
);

function setup() {
  const recorder = new TestRecorder();
  const clock = new ManualClock();
  const store = new MemoryApprovalStore();
  const approvals = new ApprovalQueue({ store, recorder, clock, ttlMs: 60_000 });
  const gate = new Gate({ policy: deferEgress, recorder, approvals });
  return { recorder, clock, approvals: Object.assign(approvals, { storeForTest: store }), gate };
}

async function deferred(gate: Gate, approvals: ApprovalQueue) {
  const waiting = gate.checkAndWait('controller', 'workload.place', EGRESS);
  await new Promise((r) => setImmediate(r));
  const [req] = await approvals.list('pending');
  if (!req) throw new Error('nothing queued');
  return { waiting, id: req.id };
}

describe('approvals are re-decided against the current policy and revocations', () => {
  it('a plain approval permits (it overrides the defer rule that caused the deferral)', async () => {
    const { gate, approvals } = setup();
    const { waiting, id } = await deferred(gate, approvals);
    const d = await approvals.approve(id, 'alice', 'ok');
    expect(d).toMatchObject({ verdict: 'permit', rule: 'egress-asks', reason: 'approved by alice: ok' });
    expect(await waiting).toEqual(d);
  });

  it('a package revoked while waiting is denied on approval (builtin:revoked, chained)', async () => {
    const { gate, approvals, recorder } = setup();
    const { waiting, id } = await deferred(gate, approvals);
    gate.setRevocations(new RevocationSet({ package_ids: [EGRESS.package_id] }));
    const d = await approvals.approve(id, 'alice');
    expect(d).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:revoked',
      approval: { id, state: 'approved', decided_by: 'alice' },
    });
    expect(d.reason).toMatch(/^approved by alice, but denied on re-decision: package id .* is revoked/);
    expect(await waiting).toEqual(d);
    expect(recorder.last().payload).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:revoked',
      policy: { name: 'test', hash: gate.policy.hash },
      approval: { state: 'approved' },
    });
    expect((await approvals.get(id)).outcome).toMatchObject({ verdict: 'deny', rule: 'builtin:revoked' });
  });

  it('a policy changed to deny while waiting is denied on approval', async () => {
    const { gate, approvals } = setup();
    const { waiting, id } = await deferred(gate, approvals);
    gate.setPolicy(
      policyOf(
        { id: 'no-egress', effect: 'deny', actions: ['workload.*'], min_network: 'egress' },
        ...deferEgress.rules,
      ),
    );
    const d = await approvals.approve(id, 'alice');
    expect(d).toMatchObject({ verdict: 'deny', rule: 'no-egress' });
    expect(await waiting).toEqual(d);
  });

  it('a policy that no longer defers (and does not permit) is denied on approval', async () => {
    const { gate, approvals } = setup();
    const { id } = await deferred(gate, approvals);
    gate.setPolicy(policyOf({ ...deferEgress.rules[1]!, max_network: 'lan' }));
    expect(await approvals.approve(id, 'alice')).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:default_deny',
    });
  });

  it('does not override a different defer rule that now applies', async () => {
    const { gate, approvals } = setup();
    const { id } = await deferred(gate, approvals);
    gate.setPolicy(
      policyOf({ id: 'everything-asks', effect: 'defer', actions: ['workload.place'] }, ...deferEgress.rules),
    );
    const d = await approvals.approve(id, 'alice');
    expect(d).toMatchObject({ verdict: 'deny', rule: 'everything-asks' });
    expect(d.reason).toContain('does not cover');
  });

  it('a policy that now permits outright permits, naming its rule', async () => {
    const { gate, approvals } = setup();
    const { id } = await deferred(gate, approvals);
    gate.setPolicy(policyOf({ id: 'all', effect: 'permit', actions: ['workload.*'], max_network: 'egress' }));
    expect(await approvals.approve(id, 'alice')).toMatchObject({ verdict: 'permit', rule: 'all' });
  });

  it('an approval made where there is no gate (an operator process) is re-decided by the waiting gate', async () => {
    const { gate, approvals, recorder, clock } = setup();
    const { waiting, id } = await deferred(gate, approvals);
    const operator = new ApprovalQueue({ store: approvals.storeForTest, recorder, clock });
    const recorded = await operator.approve(id, 'alice');
    expect(recorded).toMatchObject({ verdict: 'defer', approval: { state: 'approved' } });
    expect(recorded.reason).toContain('not permitted until the gate re-decides it');
    gate.setRevocations(new RevocationSet({ signer_keys: [EGRESS.signer_keys[0]!] }));
    const d = await approvals.wait(id);
    expect(d).toMatchObject({ verdict: 'deny', rule: 'builtin:revoked', approval: { decided_by: 'alice' } });
    expect(recorder.last().payload).toMatchObject({ verdict: 'deny', rule: 'builtin:revoked' });
    expect(await approvals.wait(id)).toEqual(d);
    expect(await waiting).toEqual(d);
    expect(recorder.events.filter((e) => (e.payload as { verdict: string }).verdict === 'deny')).toHaveLength(
      1,
    );
  });
});
