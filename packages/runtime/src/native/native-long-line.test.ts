import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { InstanceHandle } from '../contract.js';
import { LINE_CUT_MARKER } from '../output/output-buffer-lines.js';
import { scriptWorkload, tempDir } from './native-fixtures.test-util.js';
import { NativeRuntime } from './native-runtime.js';

setFlagsFromString('--expose-gc');
// cast: `gc` is the function --expose-gc (set just above) defines.
const gc = runInNewContext('gc') as () => void;

/** The V8 heap in use after full collections. */
function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function until(what: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('native output without newlines', () => {
  it('a cog printing 100 MB without a newline leaves one cut line and a bounded heap per instance', async () => {
    const rt = new NativeRuntime({
      stateDir: tempDir('heddle-state-'),
      runAsUser: process.getuid?.() === 0 ? 'nobody' : undefined,
      dataRoot: tmpdir(),
      allowHostUser: true,
      logFileBytes: 64 * 1024,
      logFiles: 1,
    });
    const w = await scriptWorkload(
      "#!/bin/sh\nhead -c 104857600 /dev/zero | tr '\\000' x\necho\necho done\n",
    );
    const before = heapAfterGc();
    const handles: InstanceHandle[] = [];
    for (const label of ['a', 'b']) {
      const h = await rt.load(w, {
        values: { label },
        runMode: { type: 'once' },
        host: { nodeId: 'node-1', dataDir: join(tempDir('heddle-data-'), 'data') },
      });
      await rt.start(h);
      handles.push(h);
    }
    for (const h of handles) await until(async () => (await rt.status(h)).state === 'exited', 60_000);
    // The instances are still loaded: whatever their line tails and buffers hold is still held.
    const perInstance = (heapAfterGc() - before) / handles.length;
    expect(perInstance).toBeLessThan(1024 * 1024);
    for (const h of handles) {
      const lines = await rt.logs(h, 10);
      expect(lines).toEqual([`${'x'.repeat(4096)}${LINE_CUT_MARKER}`, 'done']);
    }
    for (const h of handles) {
      await rt.stop(h, 100);
      await rt.unload(h);
    }
  });
});
