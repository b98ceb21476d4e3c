// Interval re-runs go through the gate, and every run's exit is chained (issue 16 item 5): the
// WorkloadHost over the real native and WASI adapters, the real gate and a real memory chain.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemoryChain } from '@heddle/chain';
import { Gate, RevocationSet } from '@heddle/gate';
import { describe, expect, it } from 'vitest';
import type { WorkloadRuntime } from '../contract.js';
import { scriptWorkload, tempDir } from '../native/native-fixtures.test-util.js';
import { NativeRuntime } from '../native/native-runtime.js';
import { fixtureWasm, wasiWorkload } from '../wasi/fixtures/fixtures.js';
import { WasiRuntime } from '../wasi/wasi-runtime.js';
import type { RuntimeWorkload } from '../workload.js';
import { WorkloadHost } from './workload-host.js';
import { policyOf, seen } from './workload-host-fixtures.js';

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

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await delay(25);
  }
}

interface Case {
  readonly name: string;
  runtime(): WorkloadRuntime;
  workload(): Promise<RuntimeWorkload>;
}

const cases: Case[] = [
  {
    name: 'native',
    runtime: () =>
      new NativeRuntime({
        stateDir: tempDir('heddle-rerun-state-'),
        runAsUser: process.getuid?.() === 0 ? 'nobody' : undefined,
        dataRoot: tmpdir(),
        allowHostUser: true,
      }),
    workload: () => scriptWorkload('#!/bin/sh\necho "run $1"\n'),
  },
  {
    name: 'wasi',
    runtime: () => new WasiRuntime({ dataRoot: tmpdir() }),
    workload: async () => wasiWorkload(await fixtureWasm('hello')),
  },
];

describe.each(cases)('interval re-runs over the $name adapter', (c) => {
  async function setup() {
    const chain = await openMemoryChain();
    const gate = new Gate({ policy, recorder: chain });
    const host = new WorkloadHost({
      runtime: c.runtime(),
      gate,
      recorder: chain,
      agent: 'host-1',
      nodeTier: 'paired',
    });
    const w = await c.workload();
    const h = await host.load(w, {
      values: {},
      runMode: { type: 'interval', secs: 1 },
      host: { nodeId: 'node-1', dataDir: join(tempDir('heddle-rerun-data-'), 'data') },
    });
    return { chain, gate, host, h, w };
  }

  it('gates every re-run: after a demotion the next re-run is denied, chained, and none follows', async () => {
    const { chain, host, h } = await setup();
    await host.start(h);
    // The first run's exit, then a gated re-run (run 2) and its exit.
    await until(() => seen(chain).filter((e) => e.kind === 'workload.exit').length >= 2);
    const before = seen(chain);
    const reruns = before.filter((e) => e.source === 'workload.runtime' && e.kind === 'workload.start');
    expect(reruns.map((e) => [e.p.phase ?? null, e.p.run ?? null])).toEqual(
      expect.arrayContaining([
        [null, null],
        ['interval', 2],
      ]),
    );
    // Each re-run record follows the gate's own permit for it.
    const i = before.findIndex(
      (e) => e.source === 'workload.runtime' && e.p.run === 2 && e.kind === 'workload.start',
    );
    expect(before[i - 1]).toMatchObject({
      source: 'workload',
      kind: 'workload.start',
      p: { verdict: 'permit' },
    });
    const exits = before.filter((e) => e.kind === 'workload.exit');
    expect(exits[0]?.p).toMatchObject({ run: 1, outcome: 'ok', evidence: { exit_code: 0 } });
    expect(exits[1]?.p).toMatchObject({ run: 2 });

    host.setNodeTier('discovered');
    await until(async () => (await host.status(h)).state === 'failed', 5000);
    const status = await host.status(h);
    expect(status.detail).toMatch(/^re-run refused: workload\.start denied/);
    const runs = status.runs;
    const after = seen(chain, before.length);
    const refusal = after.find((e) => e.kind === 'workload.refuse');
    expect(refusal?.p).toMatchObject({ failed_action: 'workload.start', phase: 'interval', verdict: 'deny' });
    expect(
      after.some((e) => e.source === 'workload' && e.kind === 'workload.start' && e.p.verdict === 'deny'),
    ).toBe(true);
    // Nothing runs any more: no new run, no new start record, for over two intervals.
    await delay(2500);
    expect((await host.status(h)).runs).toBe(runs);
    expect(
      seen(chain, before.length).filter(
        (e) => e.kind === 'workload.start' && e.p.verdict !== 'deny' && e.source === 'workload.runtime',
      ),
    ).toEqual([]);
    // Demoted, stop still goes through (teardown waiver) and so does unload.
    await host.stop(h, 100);
    await host.unload(h);
  });

  it('a revoked package is not run again by the interval', async () => {
    const { chain, gate, host, h, w } = await setup();
    await host.start(h);
    await until(() => seen(chain).filter((e) => e.kind === 'workload.exit').length >= 1);
    gate.setRevocations(new RevocationSet({ package_ids: [w.ref] }));
    await until(async () => (await host.status(h)).state === 'failed', 5000);
    const runs = (await host.status(h)).runs;
    expect(seen(chain).some((e) => e.kind === 'workload.refuse' && e.p.rule === 'builtin:revoked')).toBe(
      true,
    );
    await delay(2500);
    expect((await host.status(h)).runs).toBe(runs);
    await host.revokeTeardown(h, 100, 'revoked');
  });
});
