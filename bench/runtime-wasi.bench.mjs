// @heddle/runtime WASI adapter: load-to-exit latency of a one-shot run, stop latency of a spinning
// guest, and memory per running instance, each against a baseline measured in the same run: a raw
// spawn of node running the same module with node:wasi directly (no adapter, no runner protocol).
// Imports the built packages: run `pnpm build` (or tsup in packages/runtime) first.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, toHex } from '@heddle/envelope';
import { buildCogPackage, TrustAnchors, verifyPackage } from '@heddle/package';
import { WasiRuntime, workloadFromPackage } from '@heddle/runtime';
import { report } from './harness.mjs';

const ROUNDS = 7;
const INSTANCES = 8;
const require = createRequire(new URL('../packages/runtime/package.json', import.meta.url));
const wabt = await require('wabt')();
const wat = (name, text) => {
  const m = wabt.parseWat(name, text, { bulk_memory: true });
  m.resolveNames();
  m.validate();
  const bytes = new Uint8Array(m.toBinary({}).buffer);
  m.destroy();
  return bytes;
};
const hello = wat(
  'hello.wat',
  readFileSync(new URL('../examples/wasi-cog/hello.wat', import.meta.url), 'utf8'),
);
const loop = wat(
  'loop.wat',
  '(module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l))))',
);

const dir = mkdtempSync(join(tmpdir(), 'heddle-wasi-bench-'));
const keys = generateKeyPair();
const anchors = new TrustAnchors([{ id: 'bench', role: 'publisher', publicKey: toHex(keys.publicKey) }]);
async function workload(id, bytes) {
  const src = join(dir, `${id}-src`);
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'm.wasm'), bytes);
  writeFileSync(
    join(src, 'cog.json'),
    JSON.stringify({
      id,
      version: '1.0.0',
      variants: { 'wasm32-wasi': 'm.wasm' },
      resources: { cpu_pct: 5, ram_mb: 4 },
    }),
  );
  await buildCogPackage(src, join(dir, `${id}-pkg`), { keys: [keys] });
  return workloadFromPackage(await verifyPackage(join(dir, `${id}-pkg`), { anchors }));
}

// Baseline: node running the module with node:wasi directly, bytes from a file.
const rawScript = join(dir, 'raw.mjs');
writeFileSync(
  rawScript,
  `import { readFileSync } from 'node:fs'; import { WASI } from 'node:wasi';
const wasi = new WASI({ version: 'preview1', args: ['m', '--once'], env: { HEDDLE_NODE_ID: 'n' }, preopens: { '/data': process.argv[3] } });
const inst = await WebAssembly.instantiate(await WebAssembly.compile(readFileSync(process.argv[2])), wasi.getImportObject());
process.exitCode = wasi.start(inst);\n`,
);
writeFileSync(join(dir, 'hello.wasm'), hello);
writeFileSync(join(dir, 'loop.wasm'), loop);
const rawSpawn = (file) =>
  spawn(process.execPath, ['--no-warnings', rawScript, join(dir, file), dir], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: {},
  });
const exited = (child) => new Promise((r) => child.on('close', r));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
async function minOf(rounds, measure) {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rounds; i++) best = Math.min(best, await measure());
  return best;
}

try {
  const rt = new WasiRuntime();
  const helloW = await workload('hello-bench', hello);
  const loopW = await workload('loop-bench', loop);
  let n = 0;
  const host = () => ({ nodeId: `n${n}`, dataDir: join(dir, `data-${n++}`) });

  // 1. load -> start -> guest exited (a whole once run), versus a raw spawn to exit.
  const adapterRun = await minOf(ROUNDS, async () => {
    const t0 = performance.now();
    const h = await rt.load(helloW, { values: {}, runMode: { type: 'once' }, host: host() });
    await rt.start(h);
    while ((await rt.status(h)).state === 'running') await sleep(1);
    const ms = performance.now() - t0;
    await rt.stop(h, 0);
    await rt.unload(h);
    return ms;
  });
  const rawRun = await minOf(ROUNDS, async () => {
    const t0 = performance.now();
    await exited(rawSpawn('hello.wasm'));
    return performance.now() - t0;
  });

  // 2. stop latency of a spinning guest (SIGTERM ends the runner), versus kill of a raw spinning node.
  const adapterStop = await minOf(ROUNDS, async () => {
    const h = await rt.load(loopW, { values: {}, runMode: { type: 'listener' }, host: host() });
    await rt.start(h);
    await sleep(150);
    const t0 = performance.now();
    await rt.stop(h, 2000);
    const ms = performance.now() - t0;
    await rt.unload(h);
    return ms;
  });
  const rawStop = await minOf(ROUNDS, async () => {
    const child = rawSpawn('loop.wasm');
    await sleep(150);
    const t0 = performance.now();
    child.kill('SIGTERM');
    await exited(child);
    return performance.now() - t0;
  });

  // 3. memory per running instance (RSS of each runner), versus a raw spinning node.
  const handles = [];
  for (let i = 0; i < INSTANCES; i++) {
    const h = await rt.load(loopW, { values: {}, runMode: { type: 'listener' }, host: host() });
    await rt.start(h);
    handles.push(h);
  }
  const raws = Array.from({ length: INSTANCES }, () => rawSpawn('loop.wasm'));
  await sleep(500);
  let adapterKb = 0;
  for (const h of handles) adapterKb += rssKb((await rt.status(h)).pid);
  let rawKb = 0;
  for (const c of raws) rawKb += rssKb(c.pid);
  for (const h of handles) await rt.stop(h, 500);
  for (const c of raws) c.kill('SIGKILL');
  await Promise.all(raws.map(exited));

  report(`@heddle/runtime WASI adapter (best of ${ROUNDS}; ${INSTANCES} instances for memory)`, [
    ['raw node:wasi spawn, hello to exit', rawRun, 'ms'],
    ['WasiRuntime load+start, hello to exit', adapterRun, 'ms', adapterRun / rawRun],
    ['raw spinning node, SIGTERM to exit', rawStop, 'ms'],
    ['WasiRuntime stop of a spinning guest', adapterStop, 'ms', adapterStop / rawStop],
    ['raw node:wasi process RSS', rawKb / INSTANCES / 1024, 'MiB'],
    ['WasiRuntime runner RSS per instance', adapterKb / INSTANCES / 1024, 'MiB', adapterKb / rawKb],
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
