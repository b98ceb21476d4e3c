import type { JsonValue } from '@heddle/envelope';
import { RevocationSet } from '@heddle/gate';
import { describe, expect, it } from 'vitest';
import type { Preemption } from '../contract.js';
import { RuntimeError } from '../errors.js';
import {
  configFor,
  HOST_POLICY,
  harness,
  policyOf,
  rejection,
  seen,
  signedCog,
  trail,
} from './workload-host-fixtures.js';

const A: Preemption = { registry: 'seed', workloadId: 'radar', version: '1.0.0' };
const B: Preemption = { registry: 'seed', workloadId: 'thermo', version: '2.1.0' };

/** The `package_id` of a gate decision's context. */
function packageIdOf(context: JsonValue | undefined): string {
  const id =
    typeof context === 'object' && context !== null && !Array.isArray(context)
      ? context.package_id
      : undefined;
  return typeof id === 'string' ? id : '?';
}

describe('WorkloadHost.console', () => {
  it('without preemptions: gated as start, chained as start with phase console and the evidence', async () => {
    const { chain, runtime, host } = await harness();
    const h = await host.load(await signedCog(), configFor());
    const from = chain.size;
    const ev = await host.console(h, 'status');
    expect(ev.stoppedForConsole).toEqual([]);
    expect(runtime.calls.slice(2)).toEqual(['consolePreemptions', 'console:status']);
    expect(trail(chain, from)).toEqual(['workload workload.start', 'workload.runtime workload.start']);
    expect(seen(chain, from)[1]?.p).toMatchObject({
      phase: 'console',
      outcome: 'ok',
      preempted: [],
      resumed: [],
      evidence: { args: ['status'], stopped_for_console: [] },
    });
  });

  it('stops each preempted workload (gated as stop), runs, then resumes each (gated as start), in order', async () => {
    const { chain, runtime, host } = await harness();
    runtime.preemptions = [A, B];
    const h = await host.load(await signedCog(), configFor());
    const from = chain.size;
    const ev = await host.console(h, 'status');

    expect(runtime.calls.slice(2)).toEqual([
      'consolePreemptions',
      'preempt:radar',
      'preempt:thermo',
      'console:status',
      'resume:radar',
      'resume:thermo',
    ]);
    expect(ev.stoppedForConsole).toEqual(['radar', 'thermo']);
    const events = seen(chain, from);
    const what = (e: (typeof events)[number]): string =>
      e.source === 'workload'
        ? `gate ${e.kind} ${packageIdOf(e.p.context)}`
        : `runtime ${e.kind} ${e.p.phase} ${e.p.workload_id}`;
    const w = await signedCog();
    expect(events.map(what)).toEqual([
      `gate workload.start ${w.ref}`, // the console run itself
      'gate workload.stop seed/radar@1.0.0',
      'gate workload.stop seed/thermo@2.1.0',
      'runtime workload.stop preempt-for-console radar',
      'runtime workload.stop preempt-for-console thermo',
      'gate workload.start seed/radar@1.0.0',
      'runtime workload.start resume-after-console radar',
      'gate workload.start seed/thermo@2.1.0',
      'runtime workload.start resume-after-console thermo',
      'runtime workload.start console demo-cog',
    ]);
    expect(events[1]?.p.context).toMatchObject({
      package_id: 'seed/radar@1.0.0',
      package_trust: 'operator_attested',
    });
    expect(events[3]?.p).toMatchObject({
      workload_id: 'radar',
      version: '1.0.0',
      for_instance: h.instanceId,
    });
    expect(events[9]?.p).toMatchObject({
      preempted: ['radar', 'thermo'],
      resumed: ['radar', 'thermo'],
      evidence: { stopped_for_console: ['radar', 'thermo'] },
    });
  });

  it('if any preemption is denied, nothing is stopped and the run is refused', async () => {
    const revocations = new RevocationSet({ package_ids: ['seed/thermo@2.1.0'] });
    const { chain, runtime, host } = await harness({ revocations });
    runtime.preemptions = [A, B];
    const h = await host.load(await signedCog(), configFor());
    const from = chain.size;
    const err = await rejection(host.console(h, 'status'));
    expect(err.code).toBe('governance');
    expect(err.message).toMatch(/^console run needs thermo stopped: /);
    expect(runtime.calls.slice(2)).toEqual(['consolePreemptions']);
    expect(trail(chain, from)).toEqual([
      'workload workload.start',
      'workload workload.stop', // radar: permitted
      'workload workload.stop', // thermo: revoked
      'workload.runtime workload.refuse',
    ]);
    expect(seen(chain, from)[3]?.p).toMatchObject({
      phase: 'console',
      failed_action: 'workload.start',
      error_code: 'governance',
    });
  });

  it('a resume the gate denies leaves that workload stopped, and says so', async () => {
    // Packages may do anything; store pins may only be stopped.
    const policy = policyOf([
      { ...HOST_POLICY.rules[0], id: 'packages', min_package_trust: 'pinned_signer' },
      { id: 'pins-stop', effect: 'permit', actions: ['workload.stop'], kinds: ['cog'], max_network: 'lan' },
    ]);
    const { chain, runtime, host } = await harness({ policy });
    runtime.preemptions = [A];
    const h = await host.load(await signedCog(), configFor());
    const from = chain.size;
    const ev = await host.console(h, 'status');
    expect(ev.stoppedForConsole).toEqual(['radar']);
    expect(runtime.calls).not.toContain('resume:radar');
    const events = seen(chain, from);
    expect(events.map((e) => `${e.source} ${e.kind}`)).toEqual([
      'workload workload.start',
      'workload workload.stop',
      'workload.runtime workload.stop',
      'workload workload.start',
      'workload.runtime workload.refuse',
      'workload.runtime workload.start',
    ]);
    expect(events[4]?.p).toMatchObject({ phase: 'resume-after-console', failed_action: 'workload.start' });
    expect(events[5]?.p).toMatchObject({ preempted: ['radar'], resumed: [], outcome: 'ok' });
  });

  it('a failed console run still resumes what it stopped and is chained as a refusal', async () => {
    const { chain, runtime, host } = await harness();
    runtime.preemptions = [A];
    runtime.failures.set('console', new RuntimeError('runtime', 'console timed out'));
    const h = await host.load(await signedCog(), configFor());
    const from = chain.size;
    expect((await rejection(host.console(h, 'status'))).message).toBe('console timed out');
    expect(runtime.calls.slice(-3)).toEqual(['preempt:radar', 'console:status', 'resume:radar']);
    expect(seen(chain, from).at(-1)?.p).toMatchObject({
      phase: 'console',
      failed_action: 'workload.start',
      reason: 'console timed out',
      preempted: ['radar'],
      resumed: ['radar'],
    });
  });

  it('a failed preemption stops the sequence: no console run, the ones stopped are resumed', async () => {
    const { chain, runtime, host } = await harness();
    runtime.preemptions = [A, B];
    runtime.failures.set('preempt:thermo', new RuntimeError('runtime', 'thermo would not stop'));
    const h = await host.load(await signedCog(), configFor());
    const from = chain.size;
    expect((await rejection(host.console(h, 'status'))).message).toBe('thermo would not stop');
    expect(runtime.calls.slice(3)).toEqual(['preempt:radar', 'preempt:thermo', 'resume:radar']);
    const kinds = seen(chain, from).filter((e) => e.source === 'workload.runtime');
    expect(kinds.map((e) => [e.kind, e.p.phase, e.p.workload_id])).toEqual([
      ['workload.stop', 'preempt-for-console', 'radar'],
      ['workload.refuse', 'preempt-for-console', 'thermo'],
      ['workload.start', 'resume-after-console', 'radar'],
      ['workload.refuse', 'console', 'demo-cog'],
    ]);
  });

  it('a preempted instance this host loaded is gated with its own workload', async () => {
    const { chain, runtime, host } = await harness();
    const w = await signedCog();
    const other = await host.load(w, { ...configFor(), values: { n: 1 } });
    runtime.preemptions = [
      { registry: 'local', workloadId: w.id, version: w.version, instanceId: other.instanceId },
    ];
    const h = await host.load(w, configFor());
    const from = chain.size;
    await host.console(h, 'status');
    expect(seen(chain, from)[1]?.p.context).toMatchObject({
      package_id: w.ref,
      package_trust: 'pinned_signer',
    });
  });
});

describe('WorkloadHost.revokeTeardown', () => {
  it('is not gated: stop and unload run when the gate would deny both', async () => {
    const { chain, gate, runtime, host } = await harness();
    const w = await signedCog();
    const h = await host.load(w, configFor());
    await host.start(h);
    // The package is revoked: the gate now denies everything about it, waiver or not.
    gate.setRevocations(new RevocationSet({ package_ids: [w.ref] }));
    expect((await rejection(host.stop(h, 50))).code).toBe('governance');
    const from = chain.size;
    await host.revokeTeardown(h, 50, { package_id: w.ref, list_version: 7 });
    expect(runtime.calls.slice(-2)).toEqual(['stop', 'unload']);
    expect(runtime.calls.filter((c) => c === 'stop')).toHaveLength(1);
    expect(trail(chain, from)).toEqual([
      'workload.runtime workload.stop',
      'workload.runtime workload.unload',
    ]);
    for (const e of seen(chain, from)) {
      expect(e.p.forced_by_revocation).toEqual({ package_id: w.ref, list_version: 7 });
      expect(e.p.outcome).toBe('ok');
    }
    expect(seen(chain, from)[0]?.p.evidence).toMatchObject({ instance_id: h.instanceId });
    expect(host.instances()).toEqual([]);
  });

  it('attempts the unload when the stop fails, and chains both', async () => {
    const { chain, runtime, host } = await harness();
    const h = await host.load(await signedCog(), configFor());
    runtime.failures.set('stop', new RuntimeError('runtime', 'no such process'));
    const from = chain.size;
    await host.revokeTeardown(h, 50, 'signer revoked');
    expect(runtime.calls.slice(-2)).toEqual(['stop', 'unload']);
    const events = seen(chain, from);
    expect(events.map((e) => e.kind)).toEqual(['workload.refuse', 'workload.unload']);
    expect(events[0]?.p).toMatchObject({
      failed_action: 'workload.stop',
      reason: 'no such process',
      forced_by_revocation: 'signer revoked',
    });
    expect(events[1]?.p).toMatchObject({ outcome: 'ok', forced_by_revocation: 'signer revoked' });
  });

  it('rejects with the unload error, keeping the instance known', async () => {
    const { chain, runtime, host } = await harness();
    const h = await host.load(await signedCog(), configFor());
    runtime.failures.set('unload', new RuntimeError('runtime', 'busy'));
    expect((await rejection(host.revokeTeardown(h, 50, 1.5))).message).toBe('busy');
    expect(host.workloadFor(h)).toBeDefined();
    // A float is not canonical JSON: it is chained as its text.
    expect(seen(chain).at(-1)?.p).toMatchObject({
      failed_action: 'workload.unload',
      forced_by_revocation: '1.5',
    });
  });
});
