import { openMemoryChain } from '@heddle/chain';
import { describe, expect, it } from 'vitest';
import { REDACTED } from './host-redact.js';
import { type HostGate, WorkloadHost } from './workload-host.js';
import { configFor, harness, RecordingRuntime, seen, signedCog, trail } from './workload-host-fixtures.js';

describe('WorkloadHost security fixes', () => {
  it('keeps redacting the ingest token of an adopted instance', async () => {
    const runtime = new RecordingRuntime();
    const { chain, host } = await harness({ runtime });
    const w = await signedCog();
    const secret = 'tok_adopted_9f8e7d6c5b4a3210';
    const h = {
      instanceId: 'demo-cog-0123456789abcdef',
      runtime: 'test',
      workloadId: w.id,
      version: w.version,
    };
    runtime.evidence = { stdout: `my token is ${secret}\n`, args: ['/bin/run', secret] };
    runtime.logLines = [`token ${secret}`];
    await host.adopt(h, w, configFor(secret).host);
    const ev = await host.stop(h, 10);
    expect(JSON.stringify(ev)).not.toContain(secret);
    expect(ev.stdout).toContain(REDACTED);
    expect((await host.logs(h, 10)).join('\n')).not.toContain(secret);
    for (const e of chain) expect(JSON.stringify(e.payload)).not.toContain(secret);
  });

  it('chains a workload.refuse when the gate throws', async () => {
    const chain = await openMemoryChain();
    const gate: HostGate = {
      check: async () => {
        throw new Error('gate exploded');
      },
      checkTeardown: async () => {
        throw new Error('gate exploded');
      },
    };
    const runtime = new RecordingRuntime();
    const host = new WorkloadHost({ runtime, gate, recorder: chain, agent: 'host-1', nodeTier: 'paired' });
    const w = await signedCog();
    await expect(host.load(w, configFor())).rejects.toMatchObject({ code: 'governance' });
    expect(trail(chain)).toContain('workload.runtime workload.refuse');
    const refuse = seen(chain).find((e) => e.kind === 'workload.refuse');
    expect(refuse?.p).toMatchObject({
      outcome: 'error',
      failed_action: 'workload.load',
      error_code: 'governance',
    });
    expect(String(refuse?.p.reason)).toMatch(/gate could not decide: gate exploded/);
  });
});
