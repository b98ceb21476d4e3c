import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunMode, WorkloadConfig } from '../workload.js';
import { scriptWorkload, tempDir } from './native-fixtures.test-util.js';
import { NativeRuntime, type NativeRuntimeOptions } from './native-runtime.js';

const asRoot = process.getuid?.() === 0;

function setup(extra: Partial<NativeRuntimeOptions> = {}) {
  const stateDir = tempDir('heddle-state-');
  const rt = new NativeRuntime({
    stateDir,
    runAsUser: asRoot ? 'nobody' : undefined,
    allowHostUser: true,
    ...extra,
  });
  return { rt, stateDir, dataRoot: join(stateDir, 'data') };
}

function config(dataDir: string, runMode: RunMode = { type: 'once' }): WorkloadConfig {
  return { values: {}, runMode, host: { nodeId: 'node-1', dataDir } };
}

async function until(what: () => Promise<boolean>, ms = 6000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('NativeRuntime security checks', () => {
  it('refuses a data dir outside the data root: /etc, a symlink to /etc inside the root, a ":" path', async () => {
    const { rt, dataRoot } = setup();
    const w = await scriptWorkload('#!/bin/sh\n');
    mkdirSync(dataRoot, { recursive: true });
    symlinkSync('/etc', join(dataRoot, 'link'));
    for (const dataDir of [
      '/etc',
      join(dataRoot, 'link'),
      join(dataRoot, 'link', 'sub'),
      `${dataRoot}/a:b`,
    ]) {
      await expect(rt.load(w, config(dataDir))).rejects.toMatchObject({
        code: 'invalid_config',
        field: 'host.dataDir',
      });
    }
    await expect(rt.load(w, config(dataRoot))).rejects.toMatchObject({ code: 'invalid_config' });
    const h = await rt.load(w, config(join(dataRoot, 'ok')));
    expect(statSync(join(dataRoot, 'ok')).mode & 0o777).toBe(0o700);
    await rt.unload(h);
  });

  it('re-hashes the installed copy before every run: a modified copy is refused with evidence', async () => {
    const { rt, dataRoot } = setup();
    const w = await scriptWorkload('#!/bin/sh\necho tick\n');
    const dataDir = join(dataRoot, 'i1');
    const h = await rt.load(w, config(dataDir, { type: 'interval', secs: 1 }));
    await rt.start(h);
    await until(async () => (await rt.logs(h, 10)).includes('tick'));
    const exe = (await rt.stop(h, 100)).args[0] ?? '';
    // The data dir went missing: the next run re-creates it as load does.
    rmSync(dataDir, { recursive: true });
    await rt.start(h);
    await until(async () => ((await rt.status(h)).runs ?? 0) >= 2);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    await until(async () => (await rt.status(h)).detail?.startsWith('waiting') === true);
    chmodSync(exe, 0o755);
    writeFileSync(exe, '#!/bin/sh\necho evil\n');
    await until(async () => (await rt.status(h)).state === 'failed');
    const st = await rt.status(h);
    expect(st.detail).toMatch(/changed since it was verified/);
    const ev = await rt.stop(h, 100);
    expect(ev.notes.join('; ')).toMatch(/run refused: .*changed since it was verified/);
    expect(await rt.logs(h, 10)).not.toContain('evil');
    await expect(rt.start(h)).rejects.toMatchObject({ code: 'admission', field: 'executable' });
  });

  it('refuses to adopt from a tampered instance.json (executable, values)', async () => {
    const { rt, stateDir, dataRoot } = setup();
    const w = await scriptWorkload('#!/bin/sh\necho hi\n');
    const h = await rt.load(w, config(join(dataRoot, 'a1')));
    const file = join(stateDir, h.instanceId, 'instance.json');
    const good = readFileSync(file, 'utf8');
    const record = JSON.parse(good);
    writeFileSync(file, JSON.stringify({ ...record, executable: '/bin/sh' }));
    const rt2 = new NativeRuntime(rt.options);
    await expect(rt2.adopt(h, w)).rejects.toMatchObject({ code: 'admission', field: 'executable' });
    writeFileSync(file, JSON.stringify({ ...record, values: { nope: '$(reboot)' } }));
    await expect(new NativeRuntime(rt.options).adopt(h, w)).rejects.toMatchObject({ code: 'admission' });
    writeFileSync(file, JSON.stringify({ ...record, host: { ...record.host, dataDir: '/etc' } }));
    await expect(new NativeRuntime(rt.options).adopt(h, w)).rejects.toMatchObject({ code: 'admission' });
    writeFileSync(file, JSON.stringify({ ...record, configArgs: ['--evil', 'x'] }));
    const rt3 = new NativeRuntime(rt.options);
    await rt3.adopt(h, w);
    expect((await rt3.stop(h, 100)).args).not.toContain('--evil');
    writeFileSync(file, good);
  });
});
