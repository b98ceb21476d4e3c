import { openMemoryChain } from '@heddle/chain';
import { Gate, RevocationSet } from '@heddle/gate';
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../errors.js';
import { workloadFromStorePin } from '../workload.js';
import { WorkloadHost } from './workload-host.js';
import {
  configFor,
  HOST_POLICY,
  harness,
  policyOf,
  RecordingRuntime,
  rejection,
  seen,
  signedCog,
  trail,
} from './workload-host-fixtures.js';

const PIN = workloadFromStorePin({
  registry: 'seed',
  id: 'sensor',
  version: '1.2.0',
  sha256: 'c'.repeat(64),
});

describe('WorkloadHost: the permitted lifecycle', () => {
  it('gates, runs and chains load, start, stop and unload in order', async () => {
    const { chain, runtime, host } = await harness();
    const w = await signedCog();
    const h = await host.load(w, configFor());
    await host.start(h);
    const ev = await host.stop(h, 1000);
    await host.unload(h);

    expect(runtime.calls).toEqual(['admit', 'load', 'start', 'stop', 'unload']);
    expect(ev.instanceId).toBe(h.instanceId);
    expect(trail(chain)).toEqual([
      'workload workload.load',
      'workload.runtime workload.load',
      'workload workload.start',
      'workload.runtime workload.start',
      'workload workload.stop',
      'workload.runtime workload.stop',
      'workload workload.unload',
      'workload.runtime workload.unload',
    ]);
    const events = seen(chain);
    for (const e of events.filter((x) => x.source === 'workload')) expect(e.p.verdict).toBe('permit');
    for (const e of events.filter((x) => x.source === 'workload.runtime')) {
      expect(e.p).toMatchObject({
        runtime: 'test',
        workload_id: 'demo-cog',
        version: '1.0.0',
        outcome: 'ok',
      });
      expect(e.p.instance_id).toBe(h.instanceId);
    }
    expect(events[1]?.p.admission).toEqual({
      runtime: 'test',
      variant: 'x86_64-native',
      arch: 'x86_64',
      emulated: false,
      notes: [],
    });
    expect(events[1]?.p.host_contract).toEqual({
      node_id: 'a'.repeat(32),
      data_dir: '/var/lib/heddle/data/demo',
      ingest_token: 'none',
    });
    expect(events[5]?.p.evidence).toMatchObject({
      instance_id: h.instanceId,
      exit_code: 0,
      stdout: 'done\n',
    });
    expect(host.instances()).toEqual([]);
    expect(chain.verify().ok).toBe(true);
  });

  it('gives the gate the context of a verified package, the live tier and the adapter network', async () => {
    const { chain, host, runtime } = await harness();
    const w = await signedCog();
    runtime.network = 'none';
    await host.load(w, configFor());
    expect(seen(chain)[0]?.p.context).toEqual({
      kind: 'cog',
      package_trust: 'pinned_signer',
      node_tier: 'paired',
      network: 'none',
      secrets: false,
      emulated: false,
      resource_cost_bp: 2500, // cpu_pct 100 / 400
      package_id: w.ref,
      signer_keys: [...w.signerKeys],
      artifact_hashes: [...w.artifactHashes],
    });
  });

  it('tracks what it loaded, with the admission emulation flag', async () => {
    const { host, runtime } = await harness({
      policy: policyOf([{ ...HOST_POLICY.rules[0], emulated: true }]),
    });
    runtime.emulated = true;
    const w = await signedCog();
    const h = await host.load(w, configFor());
    expect(host.instances()).toEqual([{ instanceId: h.instanceId, workload: w, emulated: true }]);
    expect(host.workloadFor(h)).toBe(w);
  });

  it('passes status and logs through ungated and unchained', async () => {
    const { chain, host, runtime } = await harness();
    const h = await host.load(await signedCog(), configFor());
    const size = chain.size;
    expect((await host.status(h)).state).toBe('running');
    expect(await host.logs(h, 5)).toEqual(['line 1']);
    expect(chain.size).toBe(size);
    expect(runtime.calls.slice(-2)).toEqual(['status', 'logs']);
  });
});

describe('WorkloadHost: refusals', () => {
  it('a denial never reaches the adapter: governance error, gate decision and runtime refusal chained', async () => {
    const { chain, runtime, host } = await harness({ tier: 'discovered' });
    const err = await rejection(host.load(await signedCog(), configFor()));
    expect(err.code).toBe('governance');
    expect(err.message).toMatch(/^workload\.load denied: /);
    expect(runtime.calls).toEqual(['admit']);
    const [decision, refuse] = seen(chain);
    expect(decision).toMatchObject({ source: 'workload', kind: 'workload.load', p: { verdict: 'deny' } });
    expect(refuse).toMatchObject({
      source: 'workload.runtime',
      kind: 'workload.refuse',
      p: {
        outcome: 'error',
        failed_action: 'workload.load',
        error_code: 'governance',
        verdict: 'deny',
        rule: 'builtin:default_deny',
        decision_event: decision?.hash,
        instance_id: null,
      },
    });
    expect(String(refuse?.p.reason)).toContain('workload.load denied');
    expect(chain.size).toBe(2);
  });

  it('a denied start leaves the adapter alone', async () => {
    const { chain, runtime, host } = await harness();
    const h = await host.load(await signedCog(), configFor());
    runtime.network = 'egress'; // the rule allows at most lan
    const from = chain.size;
    expect((await rejection(host.start(h))).code).toBe('governance');
    expect(runtime.calls).toEqual(['admit', 'load']);
    expect(trail(chain, from)).toEqual(['workload workload.start', 'workload.runtime workload.refuse']);
    expect(seen(chain, from)[1]?.p).toMatchObject({
      failed_action: 'workload.start',
      instance_id: h.instanceId,
    });
  });

  it('a defer is refused the same way (deferred to a human)', async () => {
    const policy = policyOf([
      ...HOST_POLICY.rules,
      { id: 'starts-need-an-operator', effect: 'defer', actions: ['workload.start'], reason: 'ask first' },
    ]);
    const { chain, runtime, host } = await harness({ policy });
    const h = await host.load(await signedCog(), configFor());
    const err = await rejection(host.start(h));
    expect(err.code).toBe('governance');
    expect(err.message).toBe('workload.start deferred to a human: ask first');
    expect(runtime.calls).not.toContain('start');
    expect(seen(chain).at(-1)?.p).toMatchObject({ verdict: 'defer', rule: 'starts-need-an-operator' });
  });

  it('a gate that cannot chain its decision stops the action (governance, adapter untouched)', async () => {
    const chain = await openMemoryChain();
    const gate = new Gate({
      policy: HOST_POLICY,
      recorder: {
        append: () => Promise.reject(new Error('disk full')),
      },
    });
    const runtime = new RecordingRuntime();
    const host = new WorkloadHost({ runtime, gate, recorder: chain, agent: 'host-1', nodeTier: 'pinned' });
    const err = await rejection(host.load(await signedCog(), configFor()));
    expect(err.code).toBe('governance');
    expect(err.message).toMatch(/the gate could not decide/);
    expect(runtime.calls).toEqual(['admit']);
  });

  it('an admission failure is chained as workload.refuse and the gate is never asked', async () => {
    const { chain, runtime, host } = await harness();
    runtime.failures.set('admit', new RuntimeError('admission', 'no x86_64 native variant'));
    const err = await rejection(host.load(await signedCog(), configFor()));
    expect(err.code).toBe('admission');
    expect(runtime.calls).toEqual(['admit']);
    expect(trail(chain)).toEqual(['workload.runtime workload.refuse']);
    expect(seen(chain)[0]?.p).toMatchObject({
      outcome: 'error',
      failed_action: 'workload.load',
      error_code: 'admission',
      reason: 'no x86_64 native variant',
      admission: null,
    });
  });

  it('an adapter failure is chained as a refusal with its code; a non-RuntimeError becomes runtime', async () => {
    const { chain, runtime, host } = await harness();
    runtime.failures.set('load', new Error('ENOSPC'));
    const err = await rejection(host.load(await signedCog(), configFor()));
    expect(err.code).toBe('runtime');
    expect(host.instances()).toEqual([]);
    expect(seen(chain).at(-1)).toMatchObject({
      kind: 'workload.refuse',
      p: { failed_action: 'workload.load', error_code: 'runtime', reason: 'ENOSPC' },
    });
    runtime.failures.set('load', new RuntimeError('invalid_config', 'rate: must be at most 10'));
    expect((await rejection(host.load(await signedCog(), configFor()))).code).toBe('invalid_config');
  });

  it('an unknown handle is refused before anything (unknown_instance, nothing chained)', async () => {
    const { chain, runtime, host } = await harness();
    const ghost = {
      instanceId: 'ghost-0000000000000000',
      runtime: 'test',
      workloadId: 'ghost',
      version: '1.0.0',
    };
    for (const call of [
      host.start(ghost),
      host.stop(ghost, 10),
      host.unload(ghost),
      host.console(ghost, 'status'),
    ]) {
      expect((await rejection(call)).code).toBe('unknown_instance');
    }
    expect((await rejection(host.revokeTeardown(ghost, 10, 'x'))).code).toBe('unknown_instance');
    expect(chain.size).toBe(0);
    expect(runtime.calls).toEqual([]);
  });

  it('refuses a node tier outside the vocabulary', async () => {
    const { host } = await harness();
    // cast: untyped input (a config file) can hold a tier outside the type, which is what is refused.
    expect(() => host.setNodeTier('trusted' as 'pinned')).toThrow(RuntimeError);
    expect(host.nodeTier).toBe('paired');
  });

  it('when an outcome cannot be chained the call rejects, but the transition is kept', async () => {
    const chain = await openMemoryChain();
    let failRuntime = false;
    const recorder = {
      append: (source: string, kind: string, payload: unknown) =>
        failRuntime && source === 'workload.runtime'
          ? Promise.reject(new Error('disk full'))
          : chain.append(source, kind, payload),
    };
    const runtime = new RecordingRuntime();
    const gate = new Gate({ policy: HOST_POLICY, recorder: chain });
    const host = new WorkloadHost({ runtime, gate, recorder, agent: 'host-1', nodeTier: 'paired' });
    failRuntime = true;
    const err = await rejection(host.load(await signedCog(), configFor()));
    expect(err.code).toBe('runtime');
    expect(err.message).toMatch(/workload\.load record could not be chained: disk full/);
    expect(host.instances()).toHaveLength(1);
  });
});

describe('WorkloadHost: store pins', () => {
  it('gates workload.install then workload.load, chains the install the adapter did', async () => {
    const { chain, runtime, host } = await harness();
    runtime.storeInstalled = true;
    const h = await host.load(PIN, configFor());
    expect(runtime.calls).toEqual(['admit', 'load']);
    expect(trail(chain)).toEqual([
      'workload workload.install',
      'workload workload.load',
      'workload.runtime workload.install',
      'workload.runtime workload.load',
    ]);
    const events = seen(chain);
    expect(events[0]?.p.context).toMatchObject({
      package_trust: 'operator_attested',
      resource_cost_bp: 2500,
      package_id: 'seed/sensor@1.2.0',
      signer_keys: [],
      artifact_hashes: ['c'.repeat(64)],
    });
    expect(events[2]?.p).toMatchObject({ source: 'store_pin', outcome: 'ok', instance_id: h.instanceId });
  });

  it('a denied install stops before the load is even asked', async () => {
    const policy = policyOf([{ ...HOST_POLICY.rules[0], actions: ['workload.load', 'workload.start'] }]);
    const { chain, runtime, host } = await harness({ policy });
    expect((await rejection(host.load(PIN, configFor()))).code).toBe('governance');
    expect(runtime.calls).toEqual(['admit']);
    expect(trail(chain)).toEqual(['workload workload.install', 'workload.runtime workload.refuse']);
    expect(seen(chain)[1]?.p.failed_action).toBe('workload.install');
  });
});

describe('WorkloadHost: the teardown waiver on a demoted node', () => {
  it('after setNodeTier(discovered), start is denied but stop and unload go through with the waiver', async () => {
    const { chain, runtime, host } = await harness();
    const h = await host.load(await signedCog(), configFor());
    await host.start(h);
    host.setNodeTier('discovered');
    const from = chain.size;

    expect((await rejection(host.start(h))).code).toBe('governance');
    await host.stop(h, 100);
    await host.unload(h);
    expect(runtime.calls).toEqual(['admit', 'load', 'start', 'stop', 'unload']);
    const events = seen(chain, from);
    expect(events.map((e) => `${e.source} ${e.kind}`)).toEqual([
      'workload workload.start',
      'workload.runtime workload.refuse',
      'workload workload.stop',
      'workload.runtime workload.stop',
      'workload workload.unload',
      'workload.runtime workload.unload',
    ]);
    expect(events[0]?.p).toMatchObject({ verdict: 'deny', context: { node_tier: 'discovered' } });
    for (const i of [2, 4]) {
      expect(events[i]?.p).toMatchObject({
        verdict: 'permit',
        teardown: true,
        waiver: { node_tier: 'discovered', decided_as: 'pinned', waived_rule: 'builtin:default_deny' },
      });
    }
  });

  it('the waiver does not cover a denial that is not about the tier', async () => {
    const { runtime, host } = await harness();
    const h = await host.load(await signedCog(), configFor());
    runtime.network = 'egress';
    host.setNodeTier('discovered');
    expect((await rejection(host.stop(h, 10))).code).toBe('governance');
    expect(runtime.calls).not.toContain('stop');
  });
});

describe('WorkloadHost: adopt', () => {
  it('re-attaches through the teardown check, chained with phase readopted, once', async () => {
    const { chain, runtime, host } = await harness();
    const w = await signedCog();
    const h = {
      instanceId: 'demo-cog-0123456789abcdef',
      runtime: 'test',
      workloadId: w.id,
      version: w.version,
    };
    await host.adopt(h, w);
    await host.adopt(h, w);
    expect(runtime.calls).toEqual(['adopt']);
    expect(trail(chain)).toEqual(['workload workload.load', 'workload.runtime workload.load']);
    expect(seen(chain)[0]?.p.teardown).toBe(true);
    expect(seen(chain)[1]?.p).toMatchObject({ phase: 'readopted', outcome: 'ok', instance_id: h.instanceId });
    expect(host.instances()).toEqual([{ instanceId: h.instanceId, workload: w, emulated: false }]);
    await host.start(h);
  });

  it('a denied adoption is refused and leaves the instance unknown', async () => {
    const { runtime, host } = await harness({ tier: 'discovered' });
    const w = await signedCog();
    const h = {
      instanceId: 'demo-cog-0123456789abcdef',
      runtime: 'test',
      workloadId: w.id,
      version: w.version,
    };
    expect((await rejection(host.adopt(h, w))).code).toBe('governance');
    expect(runtime.calls).toEqual([]);
    expect(host.workloadFor(h)).toBeUndefined();
  });

  it('a revoked package is never loaded (the gate denies with builtin:revoked)', async () => {
    const w = await signedCog();
    const { chain, runtime, host } = await harness({
      revocations: new RevocationSet({ package_ids: [w.ref] }),
    });
    expect((await rejection(host.load(w, configFor()))).code).toBe('governance');
    expect(runtime.calls).toEqual(['admit']);
    expect(seen(chain)[1]?.p.rule).toBe('builtin:revoked');
  });
});
