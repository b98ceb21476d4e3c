// @heddle/runtime native adapter: load-to-running and stop latency versus a raw child_process.spawn
// of the same script (baseline, same run), memory overhead per instance, and 200 concurrent listener
// instances. Imports the built package: run `pnpm build` (or tsup in packages/runtime) first.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, toHex } from '@heddle/envelope';
import { buildCogPackage, TrustAnchors, verifyPackage } from '@heddle/package';
import { hostCogArch, NativeRuntime, workloadFromPackage } from '@heddle/runtime';
import { report } from './harness.mjs';

const SCRIPT = '#!/bin/sh\necho up\nwhile :; do sleep 1; done\n';
const dir = mkdtempSync(join(tmpdir(), 'heddle-native-bench-'));
chmodSync(dir, 0o755);
const asRoot = process.getuid?.() === 0;

/** Resolves when `stream` has printed its first line. */
const firstLine = (stream) => new Promise((resolve) => stream.once('data', () => resolve()));

try {
  const src = join(dir, 'src');
  mkdirSync(join(src, 'bin'), { recursive: true });
  writeFileSync(join(src, 'bin', 'run.sh'), SCRIPT, { mode: 0o755 });
  writeFileSync(
    join(src, 'cog.json'),
    JSON.stringify({
      id: 'bench-cog',
      version: '1.0.0',
      variants: { [`${hostCogArch()}-native`]: 'bin/run.sh' },
      config: { n: { type: 'integer', min: 0, max: 100000, default: 0 } },
      resources: { cpu_pct: 1, ram_mb: 16 },
    }),
  );
  const keys = generateKeyPair();
  await buildCogPackage(src, join(dir, 'pkg'), { keys: [keys] });
  const anchors = new TrustAnchors([{ id: 'b', role: 'publisher', publicKey: toHex(keys.publicKey) }]);
  const workload = workloadFromPackage(await verifyPackage(join(dir, 'pkg'), { anchors }));
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir, { mode: 0o755 });
  const rt = new NativeRuntime({ stateDir, ...(asRoot ? { runAsUser: 'nobody' } : {}) });
  let seq = 0;
  const cfg = () => ({
    values: { n: seq++ },
    runMode: { type: 'listener' },
    host: { nodeId: 'bench', dataDir: join(dir, 'data', String(seq)) },
  });
  const untilLogged = async (h) => {
    while ((await rt.logs(h, 1)).length === 0) await new Promise((r) => setTimeout(r, 1));
  };

  // Latency: best of ROUNDS, interleaved so noise from other processes hits both alike.
  const ROUNDS = 15;
  let rawStart = Infinity;
  let rawStop = Infinity;
  let natStart = Infinity;
  let natStop = Infinity;
  const exe = join(src, 'bin', 'run.sh');
  for (let i = 0; i < ROUNDS; i++) {
    let t0 = performance.now();
    const child = spawn(exe, [], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: {} });
    await firstLine(child.stdout);
    rawStart = Math.min(rawStart, performance.now() - t0);
    t0 = performance.now();
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid, 'SIGTERM');
    await exited;
    rawStop = Math.min(rawStop, performance.now() - t0);

    t0 = performance.now();
    const h = await rt.load(workload, cfg());
    await rt.start(h);
    await untilLogged(h);
    natStart = Math.min(natStart, performance.now() - t0);
    t0 = performance.now();
    await rt.stop(h, 5000);
    natStop = Math.min(natStop, performance.now() - t0);
    await rt.unload(h);
  }

  // Memory per instance and 200 concurrent listeners.
  const N = 200;
  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  const handles = [];
  let errors = 0;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    try {
      const h = await rt.load(workload, cfg());
      await rt.start(h);
      handles.push(h);
    } catch (err) {
      errors++;
      if (errors === 1) console.error(err);
    }
  }
  await Promise.all(handles.map(untilLogged));
  const startAll = performance.now() - t0;
  globalThis.gc?.();
  const perInstance = (process.memoryUsage().rss - rss0) / N / 1024;
  let running = 0;
  for (const h of handles) if ((await rt.status(h)).state === 'running') running++;
  const t1 = performance.now();
  const evs = await Promise.all(
    handles.map((h) =>
      rt.stop(h, 5000).catch(() => {
        errors++;
        return null;
      }),
    ),
  );
  const stopAll = performance.now() - t1;
  const killed = evs.filter((e) => e?.killed).length;
  for (const h of handles) await rt.unload(h).catch(() => errors++);

  report('native adapter (best of 15; ratio = native / raw spawn, lower is better)', [
    ['load-to-running, raw spawn', rawStart, 'ms'],
    ['load-to-running, NativeRuntime', natStart, 'ms', natStart / rawStart],
    ['stop (SIGTERM, exit), raw kill', rawStop, 'ms'],
    ['stop (SIGTERM, exit), NativeRuntime', natStop, 'ms', natStop / rawStop],
  ]);
  report(`${N} concurrent listener instances`, [
    ['host RSS per instance', perInstance, 'KiB'],
    ['load+start all, until each printed', startAll, 'ms'],
    ['running at once', running, `of ${N}`],
    ['stop all (parallel)', stopAll, 'ms'],
    ['errors', errors, ''],
    ['needed SIGKILL', killed, ''],
  ]);
  if (errors > 0 || running !== N) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
