import { readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStorePin } from '@heddle/package';
import { describe, expect, it } from 'vitest';
import type { InstanceHandle } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { hostCogArch } from '../probe/elf.js';
import { type RunMode, type RuntimeWorkload, workloadFromStorePin } from '../workload.js';
import { admitNative } from './native-admission.js';
import { scriptWorkload, tempDir } from './native-fixtures.test-util.js';
import { processStartTime } from './native-instance-file.js';
import { NativeRuntime, type NativeRuntimeOptions } from './native-runtime.js';

const asRoot = process.getuid?.() === 0;

function runtime(extra: Partial<NativeRuntimeOptions> = {}): NativeRuntime {
  return new NativeRuntime({
    stateDir: tempDir('heddle-state-'),
    runAsUser: asRoot ? 'nobody' : undefined,
    dataRoot: tmpdir(),
    allowHostUser: true,
    ...extra,
  });
}

function config(runMode: RunMode, values: Record<string, string | number> = {}) {
  return {
    values,
    runMode,
    host: {
      nodeId: 'node-1',
      dataDir: join(tempDir('heddle-data-'), 'data'),
      ingestUrl: 'http://127.0.0.1:9/x',
    },
  };
}

async function until(what: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function loadStart(
  rt: NativeRuntime,
  w: RuntimeWorkload,
  mode: RunMode,
  values: Record<string, string | number> = {},
): Promise<InstanceHandle> {
  const h = await rt.load(w, config(mode, values));
  await rt.start(h);
  return h;
}

async function refusal(p: Promise<unknown>): Promise<RuntimeError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof RuntimeError)) throw new Error(`expected a RuntimeError, got ${String(err)}`);
  return err;
}

describe('NativeRuntime', () => {
  it('runs once: argv from the run mode and config, only the contract environment, exit code in evidence', async () => {
    const rt = runtime();
    const w = await scriptWorkload(
      '#!/bin/sh\necho "args:$*"\necho "uid:$(id -u)"\nenv\necho oops >&2\nexit 3\n',
    );
    const h = await loadStart(rt, w, { type: 'once' }, { label: 'a b;$(x)', count: 2 });
    await until(async () => (await rt.status(h)).state === 'exited');
    const st = await rt.status(h);
    expect(st.lastExitCode).toBe(3);
    expect(st.runs).toBe(1);
    const ev = await rt.stop(h, 100);
    expect(ev.exitCode).toBe(3);
    expect(ev.signal).toBeNull();
    expect(ev.args.slice(1)).toEqual(['--once', '--count', '2', '--label', 'a b;$(x)']);
    expect(ev.stdout).toContain('args:--once --count 2 --label a b;$(x)');
    expect(ev.stderr).toBe('oops\n');
    if (asRoot) expect(ev.stdout).toContain('uid:65534');
    const env = Object.fromEntries(
      ev.stdout
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    // PWD is set by /bin/sh itself (it is not inherited).
    expect(Object.keys(env).sort()).toEqual(
      ['HEDDLE_DATA_DIR', 'HEDDLE_INGEST_URL', 'HEDDLE_INSTANCE_ID', 'HEDDLE_NODE_ID', 'PATH', 'PWD'].sort(),
    );
    expect(env.HEDDLE_INSTANCE_ID).toBe(h.instanceId);
    expect(env.HEDDLE_NODE_ID).toBe('node-1');
    expect(env.PWD).toBe(env.HEDDLE_DATA_DIR);
    expect(await rt.logs(h, 1)).toEqual(['stderr: oops']);
    await rt.unload(h);
    expect((await rt.status(h)).state).toBe('unknown');
  });

  it('runs an interval instance again after each run until stopped', async () => {
    const rt = runtime();
    const w = await scriptWorkload('#!/bin/sh\necho "tick $1 $2"\n');
    const h = await loadStart(rt, w, { type: 'interval', secs: 1 });
    // Wait for the second run's output (runs counts a run as soon as it is spawned).
    const ticks = async () => (await rt.logs(h, 10)).filter((l) => l === 'tick --interval 1').length;
    await until(async () => (await ticks()) >= 2, 5000);
    const ev = await rt.stop(h, 100);
    // Stopped between runs (the last run's exit 0) or during one (SIGTERM).
    expect(ev.exitCode === 0 || ev.signal === 'SIGTERM').toBe(true);
    const runs = (await rt.status(h)).runs;
    expect(await ticks()).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await rt.status(h)).runs).toBe(runs);
    expect((await rt.status(h)).state).toBe('stopped');
  });

  it('stops a listener that ignores SIGTERM with SIGKILL and kills its grandchild', async () => {
    const rt = runtime();
    const w = await scriptWorkload(
      '#!/bin/sh\ntrap \'\' TERM\nsleep 300 &\necho "child:$!"\nwhile :; do sleep 0.05; done\n',
    );
    const h = await loadStart(rt, w, { type: 'listener' });
    await until(async () => (await rt.logs(h, 5)).some((l) => l.startsWith('child:')));
    const child = Number((await rt.logs(h, 5)).find((l) => l.startsWith('child:'))?.slice(6));
    expect(processStartTime(child)).toBeDefined();
    const t0 = Date.now();
    const ev = await rt.stop(h, 300);
    const took = Date.now() - t0;
    expect(ev.killed).toBe(true);
    expect(ev.signal).toBe('SIGKILL');
    expect(ev.exitCode).toBeNull();
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3000);
    await until(async () => processStartTime(child) === undefined, 2000);
    expect((await rt.status(h)).state).toBe('stopped');
  });

  it('stops a listener that honours SIGTERM without escalating', async () => {
    const rt = runtime();
    const w = await scriptWorkload('#!/bin/sh\necho up\nwhile :; do sleep 0.05; done\n');
    const h = await loadStart(rt, w, { type: 'listener' });
    await until(async () => (await rt.logs(h, 1)).includes('up'));
    const ev = await rt.stop(h, 2000);
    expect(ev.killed).toBe(false);
    expect(ev.signal).toBe('SIGTERM');
    expect(ev.endedAtMs).toBeGreaterThanOrEqual(ev.startedAtMs ?? Infinity);
  });

  it('keeps memory and disk bounded when a workload prints 100 MB', async () => {
    const rt = runtime({ logFileBytes: 256 * 1024, logFiles: 2 });
    const w = await scriptWorkload(
      '#!/bin/sh\nyes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 104857600\n',
    );
    const rss0 = process.memoryUsage().rss;
    const h = await loadStart(rt, w, { type: 'once' });
    await until(async () => (await rt.status(h)).state === 'exited', 20000);
    const ev = await rt.stop(h, 100);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(64 * 1024 * 1024);
    expect(ev.stdout.length).toBe(64 * 1024);
    expect(ev.stdoutTruncatedBytes).toBe(104857600 - 64 * 1024);
    const logs = join(rt.options.stateDir, h.instanceId, 'logs');
    const total = readdirSync(logs).reduce((n, f) => n + statSync(join(logs, f)).size, 0);
    expect(total).toBeLessThanOrEqual(2 * 256 * 1024);
    const tail = await rt.logs(h, 3);
    // `head -c` cuts the last line; the line tail flushes it as it is.
    expect(tail.slice(0, 2)).toEqual([
      '0123456789abcdefghijklmnopqrstuvwxyz',
      '0123456789abcdefghijklmnopqrstuvwxyz',
    ]);
    expect('0123456789abcdefghijklmnopqrstuvwxyz'.startsWith(tail[2] ?? 'none')).toBe(true);
  }, 30000);

  it('enforces the address-space limit on a workload that allocates without bound (Linux)', async () => {
    if (process.platform !== 'linux') return;
    const rt = runtime({ addressSpaceMb: 64 });
    const w = await scriptWorkload('#!/bin/sh\nx=0123456789\nwhile :; do x="$x$x"; done\n');
    const h = await loadStart(rt, w, { type: 'once' });
    await until(async () => (await rt.status(h)).state === 'exited', 15000);
    const st = await rt.status(h);
    expect(st.lastExitCode === 0 && st.lastSignal === null).toBe(false);
  }, 20000);

  it('runs declared console commands only', async () => {
    const rt = runtime();
    const w = await scriptWorkload(
      '#!/bin/sh\n[ "$1" = --console ] && echo "console $2 $*" && exit 0\nexit 1\n',
    );
    const h = await rt.load(w, config({ type: 'listener' }));
    const ev = await rt.console(h, 'status');
    expect(ev.exitCode).toBe(0);
    expect(ev.stdout).toBe('console status --console status --count 1 --label x\n');
    const err = await refusal(rt.console(h, 'reboot'));
    expect(err.code).toBe('invalid_config');
    expect(err.field).toBe('command');
  });

  it('refuses invalid config naming the field, and bad run modes', async () => {
    const rt = runtime();
    const w = await scriptWorkload('#!/bin/sh\nexit 0\n');
    let err = await refusal(rt.load(w, config({ type: 'once' }, { count: 9 })));
    expect([err.code, err.field]).toEqual(['invalid_config', 'config.count']);
    err = await refusal(rt.load(w, config({ type: 'once' }, { colour: 'red' })));
    expect([err.code, err.field]).toEqual(['invalid_config', 'config.colour']);
    err = await refusal(rt.load(w, config({ type: 'interval', secs: 0 })));
    expect([err.code, err.field]).toEqual(['invalid_config', 'runMode.secs']);
  });

  it('refuses a header of another arch, a relative #! interpreter, a missing variant and store pins', async () => {
    const rt = runtime();
    const other = hostCogArch() === 'aarch64' ? 62 : 183;
    const elf = new Uint8Array(64);
    elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
    elf[18] = other;
    let err = await refusal(rt.admit(await scriptWorkload(elf)));
    expect(err.code).toBe('admission');
    expect(err.message).toContain(`e_machine ${other}`);
    err = await refusal(rt.admit(await scriptWorkload('#!sh\necho hi\n')));
    expect(err.code).toBe('admission');
    expect(err.message).toContain('not an absolute path');
    const foreign = hostCogArch() === 'riscv64' ? 'aarch64-native' : 'riscv64-native';
    err = await refusal(
      rt.admit(await scriptWorkload('#!/bin/sh\n', { variants: { [foreign]: 'bin/run.sh' } })),
    );
    expect([err.code, err.field]).toEqual(['admission', 'variants']);
    const pin = workloadFromStorePin(parseStorePin({ registry: 'seed', id: 'x', version: '1.0.0' }));
    err = await refusal(rt.admit(pin));
    expect([err.code, err.field]).toEqual(['admission', 'source']);
    const ok = await rt.admit(await scriptWorkload('#!/bin/sh\n'));
    expect(ok.notes).toContain('script: runs under /bin/sh');
  });

  it('refuses to run as root without runAsUser, and as the host user unless allowHostUser', async () => {
    const w = await scriptWorkload('#!/bin/sh\n');
    const asRootNow = { allowHostUser: true, runningAsRoot: () => true };
    let err = await refusal(
      Promise.resolve().then(() => admitNative(w, undefined, process.platform, asRootNow)),
    );
    expect([err.code, err.field]).toEqual(['admission', 'runAsUser']);
    expect(err.message).toMatch(/as root/);
    const rt = new NativeRuntime({ stateDir: tempDir('heddle-state-') });
    err = await refusal(rt.admit(w));
    expect([err.code, err.field]).toEqual(['admission', 'runAsUser']);
    if (!asRoot) expect(err.message).toMatch(/allowHostUser/);
    expect(await rt.provides()).toEqual([]);
    expect((await runtime().provides())[0]).toMatchObject({ id: 'runtime.native', provenance: 'probed' });
  });

  it('adopts a running instance after a restart and can stop it', async () => {
    const rt1 = runtime();
    const w = await scriptWorkload('#!/bin/sh\nwhile :; do sleep 0.05; done\n');
    const h = await loadStart(rt1, w, { type: 'listener' });
    const pid = (await rt1.status(h)).pid;
    const rt2 = new NativeRuntime(rt1.options);
    await rt2.adopt(h, w);
    const st = await rt2.status(h);
    expect([st.state, st.pid]).toEqual(['running', pid]);
    const ev = await rt2.stop(h, 1000);
    expect(ev.killed).toBe(false);
    expect(processStartTime(pid ?? 0)).toBeUndefined();
    const rt3 = new NativeRuntime(rt1.options);
    await rt3.adopt(h, w);
    expect((await rt3.status(h)).state).toBe('exited');
  });
});
