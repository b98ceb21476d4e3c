import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApprovalQueue } from './approval-queue.js';
import { MemoryApprovalStore } from './approval-store.js';
import { ManualClock } from './clock.js';
import { DEFAULT_POLICY } from './default-policy.js';
import { Gate } from './gate.js';
import { parsePolicy } from './policy.js';
import { RevocationSet } from './revocation.js';
import { BASE, ctx, policyOf, type TestEvent, TestRecorder } from './test-util.js';

const deferEgress = parsePolicy(
  policyOf(
    {
      id: 'egress-asks',
      effect: 'defer',
      actions: ['workload.place'],
      min_network: 'egress',
      reason: 'egress',
    },
    { id: 'cogs', effect: 'permit', actions: ['workload.*'], kinds: ['cog'], min_node_tier: 'paired' },
  ),
);

function setup(ttlMs = 60_000) {
  const recorder = new TestRecorder();
  const clock = new ManualClock();
  const store = new MemoryApprovalStore();
  const approvals = new ApprovalQueue({ store, recorder, clock, ttlMs, newId: counter() });
  const gate = new Gate({ policy: deferEgress, recorder, approvals });
  return { recorder, clock, store, approvals, gate };
}

function counter(): () => string {
  let n = 0;
  return () => (n++).toString(16).padStart(16, '0');
}

describe('Gate: chaining', () => {
  it('chains every decision with source workload, the action as kind, the verdict and the deciding rule', async () => {
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder });
    const permit = await gate.check('controller', 'workload.place', BASE);
    expect(permit).toMatchObject({ verdict: 'permit', rule: 'operator-signed-cogs-on-paired-nodes' });
    expect(permit.event_hash).toBe(recorder.last().hash);
    expect(recorder.last()).toMatchObject({
      source: 'workload',
      kind: 'workload.place',
      payload: {
        agent: 'controller',
        action: 'workload.place',
        verdict: 'permit',
        rule: 'operator-signed-cogs-on-paired-nodes',
        teardown: false,
        policy: { name: 'default', hash: gate.policy.hash },
        context: { resource_cost_bp: 2500, node_tier: 'paired' },
      },
    });
    const deny = await gate.check('controller', 'workload.start', ctx({ network: 'egress' }));
    expect(deny).toMatchObject({ verdict: 'deny', rule: 'builtin:default_deny' });
    expect(recorder.last()).toMatchObject({
      kind: 'workload.start',
      payload: { verdict: 'deny', rule: 'builtin:default_deny' },
    });
  });

  it('denies and chains any other action as workload.refuse (default deny)', async () => {
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder });
    const d = await gate.check('controller', 'workload.reboot', BASE);
    expect(d).toMatchObject({ verdict: 'deny', rule: 'builtin:unknown_action', field: 'action' });
    expect(recorder.last()).toMatchObject({
      source: 'workload',
      kind: 'workload.refuse',
      payload: { action: 'workload.reboot', verdict: 'deny', field: 'action' },
    });
  });

  it('chains malformed contexts as denials naming the field', async () => {
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder });
    const d = await gate.check('controller', 'workload.load', { ...BASE, resource_cost: 7 });
    expect(d).toMatchObject({ verdict: 'deny', rule: 'builtin:invalid_context', field: 'resource_cost' });
    expect(recorder.last()).toMatchObject({ kind: 'workload.load', payload: { field: 'resource_cost' } });
    expect(recorder.last().payload).not.toHaveProperty('context');
  });

  it('chains the teardown waiver with what was waived', async () => {
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder });
    const d = await gate.checkTeardown('host', 'workload.stop', ctx({ node_tier: 'discovered' }));
    expect(d).toMatchObject({ verdict: 'permit', waiver: { waived_rule: 'builtin:default_deny' } });
    expect(recorder.last().payload).toMatchObject({
      teardown: true,
      verdict: 'permit',
      waiver: { waived_rule: 'builtin:default_deny', node_tier: 'discovered', decided_as: 'pinned' },
    });
    const plain = await gate.check('host', 'workload.stop', ctx({ node_tier: 'discovered' }));
    expect(plain.verdict).toBe('deny');
  });

  it('applies revocations and their updates', async () => {
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder });
    expect((await gate.check('c', 'workload.start', BASE)).verdict).toBe('permit');
    gate.setRevocations(RevocationSet.parse({ artifact_hashes: [BASE.artifact_hashes[0]] }));
    expect(await gate.check('c', 'workload.start', BASE)).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:revoked',
    });
    expect(() => RevocationSet.parse({ package_ids: [''] })).toThrow(
      expect.objectContaining({ code: 'invalid_revocations', field: 'package_ids[0]' }),
    );
  });

  it('a decision that cannot be chained is not returned (decision_not_recorded)', async () => {
    const recorder = new TestRecorder();
    recorder.fail = true;
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder });
    await expect(gate.check('c', 'workload.place', BASE)).rejects.toMatchObject({
      code: 'decision_not_recorded',
    });
  });

  it('property: junk requests never throw; each is a chained, canonical denial', async () => {
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder });
    await fc.assert(
      fc.asyncProperty(
        fc.anything(),
        fc.oneof(fc.string(), fc.anything()),
        fc.anything(),
        async (agent, action, c) => {
          const before = recorder.events.length;
          const d = await gate.check(agent as string, action as string, c);
          expect(d.verdict).toBe('deny');
          expect(recorder.events.length).toBe(before + 1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is deterministic: the same requests give the same decisions and payloads', async () => {
    const run = async () => {
      const r = new TestRecorder();
      const g = new Gate({ policy: DEFAULT_POLICY, recorder: r });
      for (const over of [{}, { node_tier: 'discovered' }, { secrets: true }, { kind: 'x' }]) {
        await g.check('c', 'workload.place', ctx(over));
        await g.checkTeardown('c', 'workload.unload', ctx(over));
      }
      return r.events.map((e) => e.hash);
    };
    expect(await run()).toEqual(await run());
  });
});

describe('Gate: defer and approvals', () => {
  it('without a queue a defer is returned and chained as is', async () => {
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: deferEgress, recorder });
    const d = await gate.check('c', 'workload.place', ctx({ network: 'egress' }));
    expect(d).toEqual({
      verdict: 'defer',
      rule: 'egress-asks',
      reason: 'egress',
      event_hash: recorder.last().hash,
    });
    expect(recorder.last().payload).toMatchObject({ verdict: 'defer', rule: 'egress-asks' });
  });

  it('queues a defer; an operator approval permits the waiting check and is chained', async () => {
    const { recorder, approvals, gate } = setup();
    const waiting = gate.checkAndWait('c', 'workload.place', ctx({ network: 'egress' }));
    await new Promise((r) => setImmediate(r));
    const [req] = await approvals.list('pending');
    expect(req).toMatchObject({ rule: 'egress-asks', action: 'workload.place', state: 'pending' });
    expect(req?.defer_event).toBe(recorder.events[0]?.hash);
    expect(recorder.events[0]?.payload).toMatchObject({
      verdict: 'defer',
      approval: { id: req?.id, state: 'pending' },
    });
    const approved = await approvals.approve(req!.id, 'alice', 'looked fine');
    const d = await waiting;
    expect(d).toEqual(approved);
    expect(d).toMatchObject({
      verdict: 'permit',
      rule: 'egress-asks',
      reason: 'approved by alice: looked fine',
      approval: { id: req?.id, state: 'approved', decided_by: 'alice' },
    });
    expect(recorder.last()).toMatchObject({
      source: 'workload',
      kind: 'workload.place',
      payload: { verdict: 'permit', approval: { state: 'approved', defer_event: req?.defer_event } },
    });
    expect(d.event_hash).toBe(recorder.last().hash);
    await expect(approvals.reject(req!.id, 'bob')).rejects.toMatchObject({
      code: 'approval_already_decided',
    });
  });

  it('a rejection denies the waiting check', async () => {
    const { approvals, gate } = setup();
    const waiting = gate.checkAndWait('c', 'workload.place', ctx({ network: 'egress' }));
    await new Promise((r) => setImmediate(r));
    const [req] = await approvals.list('pending');
    await approvals.reject(req!.id, 'bob', 'not today');
    expect(await waiting).toMatchObject({
      verdict: 'deny',
      rule: 'egress-asks',
      reason: 'rejected by bob: not today',
    });
  });

  it('times out: the request expires at its deadline, the check is denied and the expiry chained', async () => {
    const { recorder, clock, approvals, gate } = setup();
    let settled: unknown;
    const waiting = gate.checkAndWait('c', 'workload.place', ctx({ network: 'egress' }), {
      timeoutMs: 5_000,
    });
    waiting.then((d) => {
      settled = d;
    });
    await clock.advance(4_999);
    expect(settled).toBeUndefined();
    await clock.advance(1);
    expect(settled).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:approval_expired',
      approval: { state: 'expired' },
    });
    expect(recorder.last().payload).toMatchObject({ verdict: 'deny', rule: 'builtin:approval_expired' });
    const [req] = await approvals.list();
    expect(req?.state).toBe('expired');
    await expect(approvals.approve(req!.id, 'alice')).rejects.toMatchObject({ code: 'approval_expired' });
    expect(clock.pendingTimers).toBe(0);
  });

  it('expires overdue requests on access even with nobody waiting', async () => {
    const { clock, approvals, gate } = setup(1_000);
    const d = await gate.check('c', 'workload.place', ctx({ network: 'egress' }));
    expect(d.verdict === 'defer' && d.approval?.expires_at).toBe(clock.now() + 1_000);
    await clock.advance(1_000);
    expect(await approvals.expireDue()).toBe(1);
    expect(await approvals.list('pending')).toEqual([]);
    expect(await approvals.wait(d.verdict === 'defer' ? d.approval!.id : '')).toMatchObject({
      rule: 'builtin:approval_expired',
    });
  });

  it('refuses unknown ids, bad operators and a full queue with codes', async () => {
    const recorder = new TestRecorder();
    const approvals = new ApprovalQueue({ store: new MemoryApprovalStore(), recorder, maxPending: 1 });
    const gate = new Gate({ policy: deferEgress, recorder, approvals });
    await expect(approvals.approve('ffff', 'a')).rejects.toMatchObject({ code: 'approval_not_found' });
    const d = await gate.check('c', 'workload.place', ctx({ network: 'egress' }));
    const id = d.verdict === 'defer' ? d.approval!.id : '';
    await expect(approvals.approve(id, '')).rejects.toMatchObject({
      code: 'invalid_operator',
      field: 'operator',
    });
    await expect(gate.check('c', 'workload.place', ctx({ network: 'egress' }))).rejects.toMatchObject({
      code: 'approval_queue_full',
    });
  });

  it('a full queue leaves no dangling approval id on the chain', async () => {
    const recorder = new TestRecorder();
    const approvals = new ApprovalQueue({ store: new MemoryApprovalStore(), recorder, maxPending: 1 });
    const gate = new Gate({ policy: deferEgress, recorder, approvals });
    await gate.check('c', 'workload.place', ctx({ network: 'egress' }));
    await expect(gate.check('c', 'workload.place', ctx({ network: 'egress' }))).rejects.toMatchObject({
      code: 'approval_queue_full',
    });
    const stored = new Set((await approvals.list()).map((r) => r.id));
    expect(stored.size).toBe(1);
    expect(recorder.events).toHaveLength(2);
    for (const e of recorder.events) {
      const id = (e.payload as { approval?: { id: string } }).approval?.id;
      if (id !== undefined) expect(stored.has(id)).toBe(true);
    }
    expect(recorder.last().payload).toMatchObject({ verdict: 'defer', rule: 'egress-asks' });
    expect(recorder.last().payload).not.toHaveProperty('approval');
    expect((recorder.last().payload as { reason: string }).reason).toContain('not queued');
  });

  it('a request that cannot be stored after its defer is chained: a follow-up refusal is chained', async () => {
    const recorder = new TestRecorder();
    const store = new MemoryApprovalStore();
    store.put = async () => {
      throw new Error('disk full');
    };
    const approvals = new ApprovalQueue({ store, recorder });
    const gate = new Gate({ policy: deferEgress, recorder, approvals });
    await expect(gate.check('c', 'workload.place', ctx({ network: 'egress' }))).rejects.toMatchObject({
      code: 'approval_not_queued',
    });
    expect(recorder.events).toHaveLength(2);
    const [defer, refusal] = recorder.events as [TestEvent, TestEvent];
    const id = (defer.payload as { approval: { id: string } }).approval.id;
    expect(refusal.payload).toMatchObject({ verdict: 'deny', rule: 'builtin:approval_unavailable' });
    const reason = (refusal.payload as { reason: string }).reason;
    expect(reason).toContain(`approval request ${id}`);
    expect(reason).toContain(defer.hash);
  });

  it('a defer that cannot be chained leaves nothing queued', async () => {
    const { recorder, approvals, gate } = setup();
    recorder.fail = true;
    await expect(gate.check('c', 'workload.place', ctx({ network: 'egress' }))).rejects.toMatchObject({
      code: 'decision_not_recorded',
    });
    expect(await approvals.list()).toEqual([]);
    recorder.fail = false;
    const d = await gate.check('c', 'workload.place', ctx({ network: 'egress' }));
    expect(d.verdict === 'defer' && d.approval?.state).toBe('pending');
  });

  it('prunes settled requests', async () => {
    const { clock, approvals, gate } = setup();
    const d = await gate.check('c', 'workload.place', ctx({ network: 'egress' }));
    await approvals.approve(d.verdict === 'defer' ? d.approval!.id : '', 'alice');
    await clock.advance(10);
    expect(await approvals.prune(clock.now())).toBe(1);
    expect(await approvals.list()).toEqual([]);
  });

  it('a permit or deny needs no approval: checkAndWait returns at once', async () => {
    const { gate, approvals } = setup();
    expect((await gate.checkAndWait('c', 'workload.place', BASE)).verdict).toBe('permit');
    expect((await gate.checkAndWait('c', 'workload.place', ctx({ kind: 'x' }))).verdict).toBe('deny');
    expect(await approvals.list()).toEqual([]);
  });
});

describe('Gate: a defer rule with approval_ttl_secs', () => {
  const withTtl = (secs: number) =>
    parsePolicy(
      policyOf(
        {
          id: 'egress-asks',
          effect: 'defer',
          actions: ['workload.place'],
          min_network: 'egress',
          approval_ttl_secs: secs,
        },
        { id: 'cogs', effect: 'permit', actions: ['workload.*'], kinds: ['cog'], min_node_tier: 'paired' },
      ),
    );

  it("queues the request with the rule's ttl (not the queue's) and expires it then", async () => {
    const recorder = new TestRecorder();
    const clock = new ManualClock();
    const approvals = new ApprovalQueue({ store: new MemoryApprovalStore(), recorder, clock, ttlMs: 60_000 });
    const gate = new Gate({ policy: withTtl(5), recorder, approvals });
    const d = await gate.check('controller', 'workload.place', ctx({ network: 'egress' }));
    expect(d.verdict).toBe('defer');
    const id = d.approval?.id ?? '';
    expect((await approvals.get(id)).expires_at).toBe(clock.now() + 5_000);
    clock.advance(5_000);
    expect((await approvals.get(id)).state).toBe('expired');
  });

  it('refuses approval_ttl_secs on a rule that does not defer, and junk values, naming the field', () => {
    const permit = { id: 'p', effect: 'permit', actions: ['workload.place'], approval_ttl_secs: 5 };
    expect(() => parsePolicy({ version: 1, name: 'x', rules: [permit] })).toThrow(
      /rules\[0\]\.approval_ttl_secs: only a defer rule/,
    );
    for (const bad of [0, -1, 1.5, 'ten', 30 * 24 * 3600 + 1]) {
      const rule = { id: 'd', effect: 'defer', actions: ['workload.place'], approval_ttl_secs: bad };
      expect(() => parsePolicy({ version: 1, name: 'x', rules: [rule] }), String(bad)).toThrow(
        /approval_ttl_secs/,
      );
    }
  });
});
