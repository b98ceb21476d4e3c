import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import type { InstanceHandle } from '../contract.js';
import { RuntimeError } from '../errors.js';
import type { RunMode, WorkloadConfig } from '../workload.js';
import { ContainerRuntime, type ContainerRuntimeOptions } from './container-runtime.js';
import {
  containerWorkload,
  digest,
  type FakeEngineState,
  fakeEnginePath,
  fakeEngineState,
  tempDir,
} from './fixtures/fixtures.js';

const IMAGE = `registry.example/acme/ctr-cog@${digest('a')}`;
const LOOP = `console.log('hello ' + process.argv.slice(1).join(' ')); console.error('env ' + Object.keys(process.env).sort().join(','));
setInterval(() => console.log('tick'), 200);`;

function setup(options: Partial<ContainerRuntimeOptions> = {}, envExtra: Record<string, string> = {}) {
  const fake = fakeEngineState();
  const rt = new ContainerRuntime({
    engine: fakeEnginePath(),
    engineEnv: { ...fake.env, ...envExtra },
    ...options,
  });
  return { fake, rt };
}

function config(
  runMode: RunMode = { type: 'listener' },
  extra: Partial<WorkloadConfig['host']> = {},
): WorkloadConfig {
  const dataDir = tempDir('heddle-ctr-data-');
  return { values: { rate: 3 }, runMode, host: { nodeId: 'node-1', dataDir, ...extra } };
}

function track(ctx: TestContext, rt: ContainerRuntime, h: InstanceHandle): InstanceHandle {
  ctx.onTestFinished(() => rt.unload(h).catch(() => undefined));
  return h;
}

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const createCall = (fake: FakeEngineState): string[] => {
  const c = fake.calls().find((a) => a[0] === 'create');
  if (c === undefined) throw new Error('no create call');
  return c;
};

// Every engine call spawns the fake engine (a Node process), so a loaded machine makes these slow.
describe('ContainerRuntime against the fake engine', { timeout: 60_000 }, () => {
  it('runs a listener with every isolation flag, logs it, stops it and removes it', async (ctx) => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: LOOP });
    const w = await containerWorkload(IMAGE, { ramMb: 256, cpuPct: 50 });
    const cfg = config(
      { type: 'listener' },
      { sensorFeedPort: 5005, ingestUrl: 'http://127.0.0.1:9/i', ingestToken: 's3cret' },
    );
    expect(await rt.admit(w)).toMatchObject({
      runtime: 'container',
      variant: 'x86_64-container',
      arch: 'x86_64',
      emulated: false,
    });
    const h = track(ctx, rt, await rt.load(w, cfg));
    expect((await rt.status(h)).state).toBe('loaded');
    const name = `heddle-${h.instanceId}`;
    expect(createCall(fake)).toEqual([
      'create',
      '--name',
      name,
      '--network',
      'none',
      '--read-only',
      '--tmpfs',
      '/tmp:rw,noexec,nosuid,size=16m',
      '--memory',
      '256m',
      '--memory-swap',
      '256m',
      '--cpus',
      '0.50',
      '--pids-limit',
      '256',
      '--user',
      '65534:65534',
      '--security-opt',
      'no-new-privileges',
      '--cap-drop',
      'ALL',
      '--log-driver',
      'json-file',
      '--log-opt',
      'max-size=1048576',
      '--log-opt',
      'max-file=3',
      '-v',
      `${cfg.host.dataDir}:/data:rw`,
      '-e',
      'HEDDLE_NODE_ID=node-1',
      '-e',
      'HEDDLE_DATA_DIR=/data',
      '-e',
      'HEDDLE_SENSOR_FEED_PORT=5005',
      '-e',
      'HEDDLE_INGEST_URL=http://127.0.0.1:9/i',
      '-e',
      'HEDDLE_INGEST_TOKEN',
      '--label',
      `heddle.instance=${h.instanceId}`,
      '--label',
      `heddle.ref=${w.ref}`,
      '--label',
      'heddle.run_mode=listener',
      '--label',
      'heddle.version=1.0.0',
      '--label',
      'heddle.workload=ctr-cog',
      IMAGE,
      '--rate',
      '3',
    ]); // prettier-ignore
    expect(JSON.stringify(fake.calls())).not.toContain('s3cret');
    await rt.start(h);
    const st = await rt.status(h);
    expect(st).toMatchObject({ state: 'running', runs: 1 });
    expect(st.pid).toBeGreaterThan(0);
    const lines = await until(
      () => rt.logs(h, 100),
      (l) => l.length >= 3,
    );
    expect(lines).toContain('hello --rate 3');
    expect(lines).toContain(
      'env HEDDLE_DATA_DIR,HEDDLE_INGEST_TOKEN,HEDDLE_INGEST_URL,HEDDLE_NODE_ID,HEDDLE_SENSOR_FEED_PORT,PATH',
    );
    const ev = await rt.stop(h, 2000);
    expect(ev).toMatchObject({
      instanceId: h.instanceId,
      exitCode: null,
      signal: 'SIGTERM',
      killed: false,
      args: [IMAGE, '--rate', '3'],
    });
    expect(ev.stdout).toContain('hello --rate 3');
    expect(ev.stderr).toContain('env ');
    expect(ev.endedAtMs).toBeGreaterThanOrEqual(ev.startedAtMs ?? Number.POSITIVE_INFINITY);
    expect((await rt.status(h)).state).toBe('stopped');
    expect(fake.calls().some((c) => c[0] === 'stop' && c[1] === '-t' && c[2] === '2')).toBe(true);
    await rt.unload(h);
    expect(fake.calls().at(-1)).toEqual(['rm', '-f', name]);
    expect((await rt.status(h)).state).toBe('unknown');
  });

  it('runs once (exit code evidence) and re-starts interval runs after each exit', async (ctx) => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: "console.log('run', process.argv.slice(1).join(' ')); process.exit(3)" });
    const w = await containerWorkload(IMAGE);
    const once = track(ctx, rt, await rt.load(w, config({ type: 'once' })));
    await rt.start(once);
    const st = await until(
      () => rt.status(once),
      (s) => s.state !== 'running',
    );
    expect(st).toMatchObject({ state: 'failed', lastExitCode: 3, lastSignal: null, runs: 1 });
    const ev = await rt.stop(once, 1000);
    expect(ev).toMatchObject({
      exitCode: 3,
      signal: null,
      killed: false,
      args: [IMAGE, '--once', '--rate', '3'],
    });
    expect(ev.stdout).toBe('run --once --rate 3\n');

    const iv = track(ctx, rt, await rt.load(w, config({ type: 'interval', secs: 1 })));
    await rt.start(iv);
    const s2 = await until(
      () => rt.status(iv),
      (s) => (s.runs ?? 0) >= 2,
      20_000,
    );
    expect(s2.runs).toBeGreaterThanOrEqual(2);
    const waiting = await until(
      () => rt.status(iv),
      (s) => s.detail?.startsWith('waiting') === true,
    );
    expect(waiting.state).toBe('exited');
    await rt.stop(iv, 1000);
    const runs = (await rt.status(iv)).runs;
    await new Promise((r) => setTimeout(r, 1300));
    expect((await rt.status(iv)).runs).toBe(runs);
  });

  it('refuses an image without a digest at admission, and a workload it cannot run', async () => {
    const { rt } = setup();
    const tagged = await containerWorkload('x', {
      variants: { 'x86_64-container': JSON.stringify({ image: 'alpine:3.20' }) },
    });
    await expect(rt.admit(tagged)).rejects.toMatchObject({ code: 'admission', field: 'image' });
    const extra = await containerWorkload('x', {
      variants: { 'x86_64-container': JSON.stringify({ image: IMAGE, cmd: 'x' }) },
    });
    await expect(rt.admit(extra)).rejects.toMatchObject({ code: 'admission' });
    const noContainer = await containerWorkload('x', { variants: { 'x86_64-native': '#!/bin/sh\n' } });
    await expect(rt.admit(noContainer)).rejects.toThrow(/no <arch>-container variant/);
  });

  it('admits a foreign-arch image only when the engine can emulate it', async (ctx) => {
    const binfmt = tempDir('heddle-binfmt-');
    const w = await containerWorkload(IMAGE, {
      variants: { 'aarch64-container': JSON.stringify({ image: IMAGE }) },
    });
    const plain = setup({ binfmtDir: binfmt }).rt;
    await expect(plain.admit(w)).rejects.toMatchObject({ code: 'admission', field: 'variants' });
    writeFileSync(join(binfmt, 'qemu-aarch64'), 'enabled\n');
    const { fake, rt } = setup({ binfmtDir: binfmt });
    expect(await rt.provides()).toEqual([
      {
        id: 'runtime.container.docker',
        attrs: { arches_native: ['x86_64'], arches_emulated: ['aarch64'], engine_version: '28.0.0-fake' },
        provenance: 'probed',
        state: 'available',
        exclusive: false,
      },
    ]);
    const adm = await rt.admit(w);
    expect(adm).toMatchObject({ variant: 'aarch64-container', arch: 'aarch64', emulated: true });
    fake.addImage(IMAGE, { script: LOOP, arch: 'arm64' });
    const h = track(ctx, rt, await rt.load(w, config()));
    expect(createCall(fake)).toContain('--platform');
    expect(h.runtime).toBe('container');
    // The arch the image really has must agree with the variant.
    const other = `registry.example/acme/other@${digest('b')}`;
    fake.addImage(other, { script: LOOP, arch: 'amd64' });
    const lie = await containerWorkload(other, {
      variants: { 'aarch64-container': JSON.stringify({ image: other }) },
    });
    await expect(rt.load(lie, config())).rejects.toMatchObject({ code: 'admission', field: 'image' });
  });

  it('pulls a missing image by digest and refuses one the registry does not have', async (ctx) => {
    const { fake, rt } = setup();
    fake.addRegistryImage(IMAGE, { script: LOOP });
    const w = await containerWorkload(IMAGE);
    track(ctx, rt, await rt.load(w, config()));
    expect(fake.calls().some((c) => c[0] === 'pull' && c[1] === IMAGE)).toBe(true);
    const missing = await containerWorkload(`registry.example/none@${digest('c')}`);
    await expect(rt.load(missing, config())).rejects.toMatchObject({ code: 'runtime', field: 'pull' });
  });

  it('escalates to kill when the container ignores stop (engine escalation and adapter kill)', async (ctx) => {
    const stubborn =
      "process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('up'); setInterval(() => {}, 1000)";
    for (const nokill of [false, true]) {
      const { fake, rt } = setup({}, nokill ? { FAKE_ENGINE_STOP_NOKILL: '1' } : {});
      fake.addImage(IMAGE, { script: stubborn });
      const h = track(ctx, rt, await rt.load(await containerWorkload(IMAGE), config()));
      await rt.start(h);
      await until(
        () => rt.logs(h, 5),
        (l) => l.includes('up'),
      );
      const t0 = Date.now();
      const ev = await rt.stop(h, 1000);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
      expect(ev).toMatchObject({ killed: true, signal: 'SIGKILL', exitCode: null });
      expect(ev.stdout).toContain('ignoring SIGTERM');
      expect(ev.notes).toContain('did not stop within 1000 ms: killed');
      expect(fake.calls().some((c) => c[0] === 'kill')).toBe(nokill);
    }
  });

  it('maps an OOM kill to "memory limit exceeded"', async (ctx) => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: 'const a = []; setInterval(() => a.push(Buffer.alloc(16 << 20, 1)), 5)' });
    const h = track(
      ctx,
      rt,
      await rt.load(await containerWorkload(IMAGE, { ramMb: 96 }), config({ type: 'once' })),
    );
    await rt.start(h);
    const st = await until(
      () => rt.status(h),
      (s) => s.state !== 'running',
    );
    expect(st).toMatchObject({ state: 'failed', lastSignal: 'SIGKILL', detail: 'memory limit exceeded' });
    const ev = await rt.stop(h, 500);
    expect(ev.notes).toContain('memory limit exceeded');
    expect(ev.killed).toBe(false);
  });

  it('bounds logs and evidence', async (ctx) => {
    const { fake, rt } = setup({ evidenceLines: 100, evidenceBytes: 500 });
    fake.addImage(IMAGE, {
      script: "for (let i = 0; i < 3000; i++) console.log('line ' + i); console.error('done')",
    });
    const h = track(ctx, rt, await rt.load(await containerWorkload(IMAGE), config({ type: 'once' })));
    await rt.start(h);
    await until(
      () => rt.status(h),
      (s) => s.state === 'exited',
    );
    expect(await rt.logs(h, 4)).toHaveLength(4);
    // Both streams, interleaved in the order the engine logged them (pipes may reorder across streams).
    const last = await rt.logs(h, 3001);
    expect(last).toHaveLength(3001);
    expect(last).toEqual(expect.arrayContaining(['line 0', 'line 2999', 'done']));
    expect(await rt.logs(h, 0)).toEqual([]);
    const ev = await rt.stop(h, 500);
    expect(ev.exitCode).toBe(0);
    expect(Buffer.byteLength(ev.stdout)).toBeLessThanOrEqual(500);
    expect(ev.stdout.endsWith('line 2999\n')).toBe(true);
    expect(ev.stdoutTruncatedBytes).toBeGreaterThan(0);
    expect(fake.calls().some((c) => c.join(' ') === `logs --tail 100 heddle-${h.instanceId}`)).toBe(true);
  });

  it('passes every interval re-run through the run hooks and reports every exit', async (ctx) => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: "console.log('run ' + Date.now())" });
    const h = track(
      ctx,
      rt,
      await rt.load(await containerWorkload(IMAGE), config({ type: 'interval', secs: 1 })),
    );
    const asked: number[] = [];
    const ended: Array<[number, number | null]> = [];
    let allow = true;
    rt.watchRuns(h, {
      beforeRun: async (run) => {
        asked.push(run);
        if (!allow) throw new Error('workload.start denied: node demoted');
      },
      runEnded: (run, ev) => ended.push([run, ev.exitCode]),
    });
    await rt.start(h);
    await until(
      async () => ended.length,
      (n) => n >= 2,
      20_000,
    );
    expect(asked[0]).toBe(2);
    expect(ended.slice(0, 2)).toEqual([
      [1, 0],
      [2, 0],
    ]);
    allow = false;
    const st = await until(
      () => rt.status(h),
      (s) => s.state === 'failed',
      20_000,
    );
    expect(st.detail).toBe('re-run refused: workload.start denied: node demoted');
    const starts = fake.calls().filter((c) => c[0] === 'start').length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(fake.calls().filter((c) => c[0] === 'start').length).toBe(starts);
    expect(starts).toBe(asked.length);
  });

  it("bounds the engine's own log of a flooding container (--log-opt max-size / max-file)", async (ctx) => {
    const { fake, rt } = setup({ logMaxBytes: 64 * 1024, logMaxFiles: 2 });
    // 5000 lines of 1000 bytes: about 5 MB of output, over 6 MB as json-file records.
    fake.addImage(IMAGE, {
      script: "const l = 'x'.repeat(999); for (let i = 0; i < 5000; i++) console.log(l); console.log('last')",
    });
    const h = track(ctx, rt, await rt.load(await containerWorkload(IMAGE), config({ type: 'once' })));
    expect(createCall(fake).join(' ')).toContain(
      '--log-driver json-file --log-opt max-size=65536 --log-opt max-file=2',
    );
    await rt.start(h);
    await until(
      () => rt.status(h),
      (s) => s.state === 'exited',
      30_000,
    );
    const dir = join(fake.dir, 'containers');
    const logs = readdirSync(dir).filter((f) => f.includes('.log'));
    const bytes = logs.reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    expect(logs.length).toBeLessThanOrEqual(2);
    // Each file is rotated before a record would take it past max-size (records are about 1.1 KB).
    expect(bytes).toBeLessThanOrEqual(2 * 64 * 1024);
    expect((await rt.logs(h, 1)).at(-1)).toBe('last');
    // podman's k8s-file driver takes max-size only.
    const pod = join(tempDir(), 'podman');
    symlinkSync(fakeEnginePath(), pod);
    const fake2 = fakeEngineState();
    fake2.addImage(IMAGE, { script: "console.log('x')" });
    const rt2 = new ContainerRuntime({ engine: pod, engineEnv: fake2.env });
    track(ctx, rt2, await rt2.load(await containerWorkload(IMAGE), config({ type: 'once' })));
    const args = createCall(fake2).join(' ');
    expect(args).toContain('--log-driver k8s-file --log-opt max-size=1048576');
    expect(args).not.toContain('max-file');
    expect(() => new ContainerRuntime({ logMaxBytes: 0 })).toThrow(/logMaxBytes/);
  });

  it('does not report again, after an adopt, a run that had already ended and been reported', async (ctx) => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: "console.log('once')" });
    const w = await containerWorkload(IMAGE);
    const h = track(ctx, rt, await rt.load(w, config({ type: 'once' })));
    const first: number[] = [];
    rt.watchRuns(h, { beforeRun: async () => {}, runEnded: (run) => first.push(run) });
    await rt.start(h);
    await until(
      async () => first.length,
      (n) => n >= 1,
    );
    expect(first).toEqual([1]);
    // The host restarts: a new adapter adopts the exited container and installs its hooks.
    const rt2 = new ContainerRuntime({ engine: fakeEnginePath(), engineEnv: fake.env });
    await rt2.adopt(h, w);
    const second: number[] = [];
    rt2.watchRuns(h, { beforeRun: async () => {}, runEnded: (run) => second.push(run) });
    await new Promise((r) => setTimeout(r, 1500));
    expect(second).toEqual([]);
    // A later run is reported as usual.
    await rt2.start(h);
    await until(
      async () => second.length,
      (n) => n >= 1,
    );
    expect(second).toEqual([2]);
  });

  it('adopts a container after a restart by its label, and refuses an unknown one', async (ctx) => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: LOOP });
    const w = await containerWorkload(IMAGE);
    const h = track(ctx, rt, await rt.load(w, config()));
    await rt.start(h);
    const rt2 = new ContainerRuntime({ engine: fakeEnginePath(), engineEnv: fake.env });
    expect((await rt2.status(h)).state).toBe('unknown');
    await rt2.adopt(h, w);
    expect(
      fake
        .calls()
        .some((c) => c.join(' ') === `ps -a --filter label=heddle.instance=${h.instanceId} --format json`),
    ).toBe(true);
    expect((await rt2.status(h)).state).toBe('running');
    const ev = await rt2.stop(h, 1000);
    expect(ev.signal).toBe('SIGTERM');
    await expect(rt2.adopt({ ...h, instanceId: 'nope-0000000000000000' }, w)).rejects.toMatchObject({
      code: 'unknown_instance',
    });
  });

  it('gives network only when package and policy both allow it', async (ctx) => {
    const netImage = JSON.stringify({ image: IMAGE, network: true });
    const allowed = setup({ allowNetwork: true });
    expect(allowed.rt.networkExposure()).toBe('egress');
    allowed.fake.addImage(IMAGE, { script: LOOP });
    track(
      ctx,
      allowed.rt,
      await allowed.rt.load(
        await containerWorkload(IMAGE, { variants: { 'x86_64-container': netImage } }),
        config(),
      ),
    );
    expect(createCall(allowed.fake).slice(3, 5)).toEqual(['--network', 'bridge']);
    const denied = setup();
    expect(denied.rt.networkExposure()).toBe('none');
    denied.fake.addImage(IMAGE, { script: LOOP });
    const w = await containerWorkload(IMAGE, { variants: { 'x86_64-container': netImage } });
    expect((await denied.rt.admit(w)).notes.some((n) => n.includes('does not allow'))).toBe(true);
    track(ctx, denied.rt, await denied.rt.load(w, config()));
    expect(createCall(denied.fake).slice(3, 5)).toEqual(['--network', 'none']);
  });

  it('validates config and console commands, and runs a console command in a fresh container', async (ctx) => {
    const { fake, rt } = setup();
    fake.addImage(IMAGE, { script: "console.log('console', process.argv.slice(1).join(' '))" });
    const w = await containerWorkload(IMAGE);
    await expect(rt.load(w, { ...config(), values: { rate: 99 } })).rejects.toMatchObject({
      code: 'invalid_config',
      field: 'config.rate',
    });
    await expect(rt.load(w, { ...config(), host: { nodeId: 'n', dataDir: 'rel' } })).rejects.toMatchObject({
      code: 'invalid_config',
    });
    const h = track(ctx, rt, await rt.load(w, config()));
    await expect(rt.console(h, 'reboot')).rejects.toMatchObject({ code: 'invalid_config', field: 'command' });
    const ev = await rt.console(h, 'status');
    expect(ev).toMatchObject({ exitCode: 0, stdout: 'console --console status --rate 3\n' });
    expect(fake.calls().at(-1)).toEqual(['rm', '-f', `heddle-${h.instanceId}-console`]);
    expect(await rt.consolePreemptions(h)).toEqual([]);
  });

  it('reports nothing and refuses admission when there is no engine or it does not answer', async () => {
    const w = await containerWorkload(IMAGE);
    const none = new ContainerRuntime({ engine: join(tempDir(), 'no-such-docker') });
    expect(await none.provides()).toEqual([]);
    await expect(none.admit(w)).rejects.toMatchObject({ code: 'admission', field: 'engine' });
    const emptyPath = tempDir();
    mkdirSync(join(emptyPath, 'bin'));
    const { rt } = setup({}, { FAKE_ENGINE_NO_SERVER: '1' });
    expect(await rt.provides()).toEqual([]);
    const err = await rt.admit(w).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeError);
    expect(err).toMatchObject({ message: expect.stringMatching(/did not answer "version"/) });
    expect(() => new ContainerRuntime({ user: '0:0' })).toThrow(/never run as root/);
  });
});
