import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunMode } from '../workload.js';
import { scriptWorkload, tempDir } from './native-fixtures.test-util.js';
import { NativeRuntime, type NativeRuntimeOptions } from './native-runtime.js';

function runtime(extra: Partial<NativeRuntimeOptions> = {}): NativeRuntime {
  return new NativeRuntime({
    stateDir: tempDir('heddle-state-'),
    runAsUser: process.getuid?.() === 0 ? 'nobody' : undefined,
    dataRoot: tmpdir(),
    allowHostUser: true,
    ...extra,
  });
}

async function until(what: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const SPIN = '#!/bin/sh\nwhile :; do :; done\n';

describe('native CPU time limit', () => {
  it.each<[string, RunMode, Partial<NativeRuntimeOptions>]>([
    ['a once run (cpuSeconds)', { type: 'once' }, { cpuSeconds: 1 }],
    ['a listener (listenerCpuSeconds)', { type: 'listener' }, { listenerCpuSeconds: 1 }],
  ])(
    'ends %s that spins past its CPU seconds, with the reason in the evidence',
    async (_, runMode, options) => {
      const rt = runtime(options);
      const h = await rt.load(await scriptWorkload(SPIN), {
        values: {},
        runMode,
        host: { nodeId: 'node-1', dataDir: join(tempDir('heddle-data-'), 'data') },
      });
      const t0 = Date.now();
      await rt.start(h);
      await until(async () => ['exited', 'failed'].includes((await rt.status(h)).state), 15_000);
      expect(Date.now() - t0).toBeLessThan(10_000);
      const ev = await rt.stop(h, 100);
      expect(ev.signal).toBe('SIGXCPU');
      expect(ev.notes).toContain('cpu time limit exceeded: the run used 1 s of CPU and was ended (SIGXCPU)');
      await rt.unload(h);
    },
  );

  it('refuses a negative limit', () => {
    expect(() => runtime({ cpuSeconds: -1 })).toThrow(/cpuSeconds/);
  });
});
