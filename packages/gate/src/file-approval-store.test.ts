import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApprovalQueue } from './approval-queue.js';
import { ManualClock } from './clock.js';
import { FileApprovalStore } from './file-approval-store.js';
import { Gate } from './gate.js';
import { parsePolicy } from './policy.js';
import { ctx, policyOf, TestRecorder } from './test-util.js';

const policy = parsePolicy(
  policyOf(
    { id: 'heavy', effect: 'defer', actions: ['workload.place'], min_resource_cost: 0.75 },
    { id: 'ok', effect: 'permit', actions: ['workload.*'] },
  ),
);

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'gate-store-'));
}

describe('FileApprovalStore', () => {
  it('persists requests across reopen (mode 0600) and a missing file is empty', async () => {
    const path = join(dir(), 'approvals.json');
    const store = new FileApprovalStore(path);
    expect(await store.list()).toEqual([]);
    const recorder = new TestRecorder();
    const gate = new Gate({ policy, recorder, approvals: new ApprovalQueue({ store, recorder }) });
    const d = await gate.check('c', 'workload.place', ctx({ resource_cost: 0.9 }));
    expect(d.verdict).toBe('defer');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const reopened = new ApprovalQueue({ store: new FileApprovalStore(path), recorder });
    const [req] = await reopened.list('pending');
    expect(req).toMatchObject({ rule: 'heavy', context: { resource_cost: 0.9 } });
    await reopened.approve(req!.id, 'alice');
    expect((await new FileApprovalStore(path).get(req!.id))?.state).toBe('approved');
    await store.remove([req!.id]);
    expect(await store.list()).toEqual([]);
  });

  it('a waiting check sees a decision made through another process (polling the file)', async () => {
    const path = join(dir(), 'approvals.json');
    const clock = new ManualClock();
    const recorder = new TestRecorder();
    const waiterQueue = new ApprovalQueue({
      store: new FileApprovalStore(path),
      recorder,
      clock,
      pollMs: 500,
    });
    const gate = new Gate({ policy, recorder, approvals: waiterQueue });
    let settled: unknown;
    gate.checkAndWait('c', 'workload.place', ctx({ resource_cost: 0.9 })).then((d) => {
      settled = d;
    });
    await clock.advance(0);
    // The operator's CLI: a separate queue over the same file.
    const operator = new ApprovalQueue({ store: new FileApprovalStore(path), recorder, clock });
    const [req] = await operator.list('pending');
    await operator.approve(req!.id, 'alice');
    expect(settled).toBeUndefined();
    await clock.advance(500);
    expect(settled).toMatchObject({ verdict: 'permit', approval: { decided_by: 'alice' } });
  });

  it('refuses a corrupt file with approval_store_corrupt, naming the field', async () => {
    const d = dir();
    const bad = join(d, 'bad.json');
    writeFileSync(bad, '{"version":1,"requests":[{"id":"zz"}]}');
    await expect(new FileApprovalStore(bad).list()).rejects.toMatchObject({
      code: 'approval_store_corrupt',
      field: 'requests[0].id',
    });
    writeFileSync(bad, '{"version":1,');
    await expect(new FileApprovalStore(bad).list()).rejects.toMatchObject({ code: 'approval_store_corrupt' });
  });

  it('writes atomically: no temporary files are left behind and the file is whole JSON', async () => {
    const d = dir();
    const path = join(d, 'a.json');
    const store = new FileApprovalStore(path);
    const recorder = new TestRecorder();
    const gate = new Gate({ policy, recorder, approvals: new ApprovalQueue({ store, recorder }) });
    for (let i = 0; i < 5; i++) await gate.check('c', 'workload.place', ctx({ resource_cost: 0.8 }));
    expect(JSON.parse(readFileSync(path, 'utf8')).requests).toHaveLength(5);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(d)).toEqual(['a.json']);
  });
});
