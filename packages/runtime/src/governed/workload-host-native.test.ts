import { tmpdir } from 'node:os';
// End to end: the WorkloadHost over the real native adapter running /bin/sh, the real gate and a
// real memory chain.
import { join } from 'node:path';
import { openMemoryChain } from '@heddle/chain';
import { canonicalJson } from '@heddle/envelope';
import { Gate } from '@heddle/gate';
import { describe, expect, it } from 'vitest';
import { scriptWorkload, tempDir } from '../native/native-fixtures.test-util.js';
import { NativeRuntime } from '../native/native-runtime.js';
import { WorkloadHost } from './workload-host.js';
import { policyOf, seen, trail } from './workload-host-fixtures.js';

const SCRIPT = `#!/bin/sh
if [ "$1" = "--console" ]; then echo "console $2 token=$HEDDLE_INGEST_TOKEN"; exit 0; fi
echo "listening with $HEDDLE_INGEST_TOKEN"
trap 'echo bye; exit 0' TERM
while :; do sleep 0.05; done
`;

describe('WorkloadHost over the native adapter', () => {
  it('loads, starts, runs a console command, stops and unloads a /bin/sh cog, all governed and chained', async () => {
    const chain = await openMemoryChain();
    // The native adapter gives instances egress; this node's policy allows it for pinned-signer cogs.
    const policy = policyOf([
      {
        id: 'signed-cogs',
        effect: 'permit',
        actions: ['workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
        kinds: ['cog'],
        min_package_trust: 'pinned_signer',
        min_node_tier: 'paired',
        max_network: 'egress',
      },
    ]);
    const gate = new Gate({ policy, recorder: chain });
    const runtime = new NativeRuntime({
      stateDir: tempDir('heddle-host-state-'),
      runAsUser: process.getuid?.() === 0 ? 'nobody' : undefined,
      dataRoot: tmpdir(),
      allowHostUser: true,
    });
    const host = new WorkloadHost({ runtime, gate, recorder: chain, agent: 'host-1', nodeTier: 'paired' });
    const w = await scriptWorkload(SCRIPT);
    const token = 'tok_e2e_5f1c9a7b3d2e4f60';
    const h = await host.load(w, {
      values: {},
      runMode: { type: 'listener' },
      host: {
        nodeId: 'node-1',
        dataDir: join(tempDir('heddle-host-data-'), 'data'),
        ingestUrl: 'http://127.0.0.1:9/ingest',
        ingestToken: token,
      },
    });
    await host.start(h);
    const deadline = Date.now() + 5000;
    while ((await host.logs(h, 10)).length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await host.status(h)).state).toBe('running');
    expect((await host.logs(h, 10)).join('\n')).toContain('listening with [redacted]');

    const consoled = await host.console(h, 'status');
    expect(consoled.exitCode).toBe(0);
    expect(consoled.stdout).toBe('console status token=[redacted]\n');
    const stopped = await host.stop(h, 2000);
    expect(stopped.killed).toBe(false);
    expect(stopped.stdout).toContain('bye');
    await host.unload(h);

    expect(trail(chain).filter((t) => t.startsWith('workload.runtime'))).toEqual([
      'workload.runtime workload.load',
      'workload.runtime workload.start',
      'workload.runtime workload.start',
      'workload.runtime workload.stop',
      'workload.runtime workload.unload',
    ]);
    const events = seen(chain);
    expect(events.filter((e) => e.source === 'workload').every((e) => e.p.verdict === 'permit')).toBe(true);
    expect(
      events.find((e) => e.kind === 'workload.load' && e.source === 'workload.runtime')?.p.admission,
    ).toMatchObject({
      runtime: 'native',
    });
    const stopEvent = events.find((e) => e.kind === 'workload.stop' && e.source === 'workload.runtime');
    expect(stopEvent?.p.evidence).toMatchObject({ instance_id: h.instanceId, killed: false });
    for (const e of chain) expect(canonicalJson(e.payload)).not.toContain(token);
    expect(chain.verify().ok).toBe(true);
  });
});
