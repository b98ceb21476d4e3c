import { openMemoryChain } from '@heddle/chain';
import { describe, expect, it } from 'vitest';
import { ApprovalQueue } from './approval-queue.js';
import { MemoryApprovalStore } from './approval-store.js';
import { DEFAULT_POLICY } from './default-policy.js';
import { Gate } from './gate.js';
import { parsePolicy } from './policy.js';
import { ctx, policyOf } from './test-util.js';

describe('with the real @heddle/chain', () => {
  it('chains decisions, refusals, waivers and approvals that verify and link the defer', async () => {
    const chain = await openMemoryChain();
    const approvals = new ApprovalQueue({ store: new MemoryApprovalStore(), recorder: chain });
    const policy = parsePolicy(
      policyOf(...DEFAULT_POLICY.rules, {
        id: 'heavy-asks',
        effect: 'defer',
        actions: ['workload.place'],
        min_resource_cost: 0.75,
      }),
    );
    const gate = new Gate({ policy, recorder: chain, approvals });
    const permit = await gate.check('controller', 'workload.place', ctx());
    await gate.check('controller', 'workload.frobnicate', ctx());
    await gate.checkTeardown('host', 'workload.unload', ctx({ node_tier: 'discovered' }));
    const defer = await gate.check('controller', 'workload.place', ctx({ resource_cost: 0.9 }));
    expect(defer.verdict).toBe('defer');
    const approved = await approvals.approve(defer.verdict === 'defer' ? defer.approval!.id : '', 'alice');

    expect(chain.size).toBe(5);
    expect(chain.verify().ok).toBe(true);
    expect(chain.getByHash(permit.event_hash)).toMatchObject({
      source: 'workload',
      kind: 'workload.place',
      payload: { verdict: 'permit', rule: 'operator-signed-cogs-on-paired-nodes' },
    });
    expect(chain.get(1)).toMatchObject({
      kind: 'workload.refuse',
      payload: { rule: 'builtin:unknown_action' },
    });
    expect(chain.get(2)).toMatchObject({
      kind: 'workload.unload',
      payload: { waiver: { waived_rule: 'builtin:default_deny' } },
    });
    expect(chain.getByHash(approved.event_hash)).toMatchObject({
      kind: 'workload.place',
      payload: { verdict: 'permit', approval: { state: 'approved', defer_event: defer.event_hash } },
    });
  });
});
