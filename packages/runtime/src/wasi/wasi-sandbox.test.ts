import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InstanceHandle } from '../contract.js';
import type { RunMode, WorkloadConfig } from '../workload.js';
import { fixtureWasm, tempDir, wasiWorkload } from './fixtures/fixtures.js';
import { WasiRuntime } from './wasi-runtime.js';

const running: Array<{ rt: WasiRuntime; h: InstanceHandle }> = [];
afterEach(async () => {
  for (const { rt, h } of running.splice(0)) await rt.stop(h, 0).catch(() => {});
});

function config(runMode: RunMode = { type: 'once' }, extra: Partial<WorkloadConfig['host']> = {}) {
  const dataDir = join(tempDir(), 'data');
  return { values: {}, runMode, host: { nodeId: 'node-1', dataDir, ...extra } } satisfies WorkloadConfig;
}

async function waitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('WASI sandbox', () => {
  const rt = new WasiRuntime({ dataRoot: '/tmp' });

  it('refuses guest symlinks: a two-step symlink chain cannot read outside the data dir', async () => {
    const cfg = config();
    writeFileSync(join(dirname(cfg.host.dataDir), 'secret.txt'), 'TOP-SECRET\n');
    const h = await rt.load(await wasiWorkload(await fixtureWasm('symlink-escape')), cfg);
    await rt.start(h);
    await waitFor(async () => ['exited', 'failed'].includes((await rt.status(h)).state));
    const ev = await rt.stop(h, 100);
    expect(ev.stdout).toBe('symlink-refused\nsymlink-refused\nread-denied\n');
    expect(ev.stdout).not.toContain('TOP-SECRET');
  });

  it('refuses to run when the data dir holds a symlink (d -> /)', async () => {
    const cfg = config();
    const h = await rt.load(await wasiWorkload(await fixtureWasm('hello')), cfg);
    mkdirSync(join(cfg.host.dataDir, 'sub'));
    symlinkSync('/', join(cfg.host.dataDir, 'sub', 'd'));
    await expect(rt.start(h)).rejects.toMatchObject({ code: 'runtime', field: 'host.dataDir' });
    expect((await rt.status(h)).state).toBe('failed');
    await expect(rt.console(h, 'status')).rejects.toMatchObject({ code: 'runtime' });
  });

  it('keeps the ingest token and environment out of the runner argv (/proc/<pid>/cmdline)', async () => {
    const cfg = config({ type: 'listener' }, { ingestUrl: 'http://x', ingestToken: 'sekret-t0ken-42' });
    const h = await rt.load(await wasiWorkload(await fixtureWasm('loop')), cfg);
    running.push({ rt, h });
    await rt.start(h);
    await waitFor(async () => (await rt.status(h)).pid !== undefined);
    const pid = (await rt.status(h)).pid;
    await new Promise((r) => setTimeout(r, 200));
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('wasi-runner.mjs');
    expect(cmdline).not.toContain('sekret-t0ken-42');
    expect(cmdline).not.toContain('HEDDLE_');
  });
});
