import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStorePin } from '@heddle/package';
import { afterEach, describe, expect, it } from 'vitest';
import type { InstanceHandle } from '../contract.js';
import { RuntimeError } from '../errors.js';
import { type RunMode, type WorkloadConfig, workloadFromStorePin } from '../workload.js';
import { assembleWat, fixtureWasm, tempDir, wasiWorkload } from './fixtures/fixtures.js';
import { WasiRuntime } from './wasi-runtime.js';

const running: Array<{ rt: WasiRuntime; h: InstanceHandle }> = [];
afterEach(async () => {
  for (const { rt, h } of running.splice(0)) await rt.stop(h, 0).catch(() => {});
});

function config(
  runMode: RunMode = { type: 'once' },
  extra: Partial<WorkloadConfig['host']> = {},
): WorkloadConfig {
  return { values: {}, runMode, host: { nodeId: 'node-1', dataDir: join(tempDir(), 'data'), ...extra } };
}

async function waitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function runToEnd(rt: WasiRuntime, name: string, cfg: WorkloadConfig = config(), ramMb = 16) {
  const w = await wasiWorkload(await fixtureWasm(name), { resources: { cpu_pct: 10, ram_mb: ramMb } });
  const h = await rt.load(w, cfg);
  await rt.start(h);
  await waitFor(async () => ['exited', 'failed'].includes((await rt.status(h)).state));
  return { h, evidence: await rt.stop(h, 100), status: await rt.status(h) };
}

describe('WasiRuntime', () => {
  const rt = new WasiRuntime();

  it('runs hello once: output captured, exit 0, timings', async () => {
    const { h, evidence, status } = await runToEnd(rt, 'hello');
    expect(status.state).toBe('exited');
    expect(evidence.exitCode).toBe(0);
    expect(evidence.signal).toBeNull();
    expect(evidence.stdout).toBe('hello from wasi\n');
    expect(evidence.args).toEqual(['wasi-test.wasm', '--once', '--greeting', 'hi']);
    expect(evidence.endedAtMs).toBeGreaterThanOrEqual(evidence.startedAtMs ?? Number.POSITIVE_INFINITY);
    expect(await rt.logs(h, 10)).toEqual(['hello from wasi']);
    await rt.unload(h);
    expect((await rt.status(h)).state).toBe('unknown');
  });

  it('writes only inside its data dir: ../escape.txt and /etc/passwd are refused', async () => {
    const cfg = config();
    const { evidence } = await runToEnd(rt, 'files', cfg);
    expect(evidence.stdout).toBe('write-ok\nescape-denied\npasswd-denied\n');
    expect(readFileSync(join(cfg.host.dataDir, 'out.txt'), 'utf8')).toBe('written by wasi\n');
    expect(existsSync(join(cfg.host.dataDir, '..', 'escape.txt'))).toBe(false);
  });

  it('sees only the host contract in its environment, and the cog argv', async () => {
    const cfg = config(
      { type: 'interval', secs: 30 },
      { sensorFeedPort: 5555, ingestUrl: 'http://x', ingestToken: 't0k' },
    );
    const w = await wasiWorkload(await fixtureWasm('env'));
    const h = await rt.load(w, { ...cfg, values: { greeting: 'yo' } });
    running.push({ rt, h });
    await rt.start(h);
    await waitFor(async () => (await rt.status(h)).detail !== undefined);
    const ev = await rt.stop(h, 100);
    const [args, env] = ev.stdout.split('--env--\n');
    expect(args).toBe('wasi-test.wasm\n--interval\n30\n--greeting\nyo\n');
    expect((env ?? '').trim().split('\n').sort()).toEqual([
      'HEDDLE_DATA_DIR=/data',
      'HEDDLE_INGEST_TOKEN=t0k',
      'HEDDLE_INGEST_URL=http://x',
      `HEDDLE_INSTANCE_ID=${h.instanceId}`,
      'HEDDLE_NODE_ID=node-1',
      'HEDDLE_SENSOR_FEED_PORT=5555',
    ]);
    expect(ev.args.join(' ')).not.toContain('t0k');
  });

  it('enforces the memory cap (ram_mb) and reports it as evidence', async () => {
    const { evidence } = await runToEnd(rt, 'grow', config(), 2);
    expect(evidence.exitCode).toBe(3);
    expect(evidence.stdout).toBe('grow-failed\n');
    expect(evidence.notes.join('; ')).toMatch(
      /memory limit exceeded: linear memory at 17 of 32 pages \(cap 2 MiB\)/,
    );
    const trapped = await runToEnd(rt, 'grow-imported', config(), 2);
    expect(trapped.evidence.exitCode).toBe(134);
    expect(trapped.evidence.notes).toContain('trap: unreachable');
    expect(trapped.evidence.notes.join('; ')).toMatch(/memory limit exceeded/);
  });

  it('kills an infinite loop on stop within grace plus a margin', async () => {
    const w = await wasiWorkload(await fixtureWasm('loop'));
    const h = await rt.load(w, config({ type: 'listener' }));
    running.push({ rt, h });
    await rt.start(h);
    await new Promise((r) => setTimeout(r, 300));
    const status = await rt.status(h);
    expect(status.state).toBe('running');
    expect(status.pid).toBeGreaterThan(0);
    const t0 = Date.now();
    const ev = await rt.stop(h, 500);
    expect(Date.now() - t0).toBeLessThan(500 + 1000);
    expect(ev.exitCode).toBeNull();
    expect(ev.signal).toMatch(/SIGTERM|SIGKILL/);
    expect(() => process.kill(status.pid ?? -1, 0)).toThrow();
    expect((await rt.status(h)).state).toBe('stopped');
  });

  it('runs again every interval until stopped', async () => {
    const w = await wasiWorkload(await fixtureWasm('hello'));
    const h = await rt.load(w, config({ type: 'interval', secs: 1 }));
    running.push({ rt, h });
    await rt.start(h);
    await waitFor(async () => (await rt.logs(h, 10)).length >= 2, 4000);
    expect((await rt.status(h)).state).toBe('running');
    await expect(rt.start(h)).rejects.toThrow(/already running/);
    await expect(rt.unload(h)).rejects.toThrow(/stop it first/);
    await rt.stop(h, 100);
    const runs = (await rt.status(h)).runs;
    await new Promise((r) => setTimeout(r, 1200));
    expect((await rt.status(h)).runs).toBe(runs);
    expect((await rt.logs(h, 10)).filter((l) => l === 'hello from wasi').length).toBeGreaterThanOrEqual(2);
  });

  it('runs a declared console command once with --console and refuses others', async () => {
    const w = await wasiWorkload(await fixtureWasm('env'));
    const h = await rt.load(w, config({ type: 'listener' }));
    const ev = await rt.console(h, 'status');
    expect(ev.exitCode).toBe(0);
    expect(ev.stdout.startsWith('wasi-test.wasm\n--console\nstatus\n--greeting\nhi\n')).toBe(true);
    await expect(rt.console(h, 'reboot')).rejects.toMatchObject({ code: 'invalid_config' });
    expect(await rt.consolePreemptions(h)).toEqual([]);
  });

  it('refuses at admission: a store pin, a non-wasm file, a module importing outside WASI', async () => {
    const pin = parseStorePin({
      registry: 'seed-1',
      id: 'thing',
      version: '1.0.0',
      sha256: 'a'.repeat(64),
    });
    await expect(rt.admit(workloadFromStorePin(pin))).rejects.toMatchObject({
      code: 'admission',
      field: 'source',
    });
    const notWasm = await wasiWorkload('#!/bin/sh\necho hi\n');
    const err = await rt.admit(notWasm).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeError);
    expect(err).toMatchObject({ code: 'admission', field: 'variant.file' });
    await expect(rt.load(notWasm, config())).rejects.toMatchObject({ code: 'admission' });
    const admission = await rt.admit(await wasiWorkload(await fixtureWasm('hello')));
    expect(admission).toMatchObject({
      runtime: 'wasi',
      variant: 'wasm32-wasi',
      arch: 'wasm32',
      emulated: false,
    });
  });

  it('refuses config outside the schema and is idempotent per instance id', async () => {
    const w = await wasiWorkload(await fixtureWasm('hello'));
    await expect(rt.load(w, { ...config(), values: { nope: 1 } })).rejects.toMatchObject({
      code: 'invalid_config',
      field: 'config.nope',
    });
    const cfg = config();
    const a = await rt.load(w, cfg);
    expect(await rt.load(w, cfg)).toEqual(a);
    await expect(rt.start({ ...a, instanceId: 'other' })).rejects.toMatchObject({ code: 'unknown_instance' });
  });

  it('runs the examples/wasi-cog guest: one JSON line naming the node and mode', async () => {
    const wat = readFileSync(new URL('../../../../examples/wasi-cog/hello.wat', import.meta.url), 'utf8');
    const w = await wasiWorkload(await assembleWat('hello.wat', wat), { config: {} });
    const h = await rt.load(w, config());
    await rt.start(h);
    await waitFor(async () => (await rt.status(h)).state === 'exited');
    const ev = await rt.stop(h, 100);
    expect(JSON.parse(ev.stdout)).toEqual({ cog: 'wasi-cog', node: 'node-1', mode: 'once' });
    expect(JSON.parse((await rt.console(h, 'status')).stdout)).toMatchObject({ mode: 'console' });
  });

  it('provides runtime.wasi, probed by running a module', async () => {
    const caps = await rt.provides();
    expect(caps).toHaveLength(1);
    expect(caps[0]).toMatchObject({ id: 'runtime.wasi', provenance: 'probed', state: 'available' });
    expect([rt.controlMode(), rt.linkSecurity(), rt.networkExposure()]).toEqual(['managed', 'local', 'none']);
  });
});
