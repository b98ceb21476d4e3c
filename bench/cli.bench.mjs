// heddle CLI: command latency against a running controller daemon (each command a fresh process, as an
// operator runs it), versus a bare `node -e ''` process start and a raw HTTP call to the same API in
// the same run. Imports nothing: runs the built CLI (`pnpm build` first). `--runs=N` (default 20).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { report } from './harness.mjs';

const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 20);
const HEDDLE = new URL('../apps/controller/dist/bin.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'heddle-cli-bench-'));
const home = join(dir, 'home');
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function time(fn) {
  const out = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return out;
}

function heddle(...args) {
  const r = spawnSync(process.execPath, [HEDDLE, ...args, '--home', home], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`heddle ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

let daemon;
try {
  heddle('init', '--api-port', '0');
  daemon = spawn(process.execPath, [HEDDLE, 'controller', 'run', '--home', home], { stdio: 'ignore' });
  const info = join(home, 'api.json');
  for (let i = 0; i < 200 && !existsSync(info); i++) await new Promise((r) => setTimeout(r, 50));
  const { url } = JSON.parse(readFileSync(info, 'utf8'));
  const token = readFileSync(join(home, 'api.token'), 'utf8').trim();

  const bare = time(() => spawnSync(process.execPath, ['-e', '']));
  const ps = time(() => heddle('ps'));
  const nodes = time(() => heddle('node', 'ls', '--json'));
  const http = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/instances`, { headers: { authorization: `Bearer ${token}` } });
    await res.json();
    http.push(performance.now() - t0);
  }
  report(`CLI command latency against the daemon, ${RUNS} runs each (fresh process per command)`, [
    ['bare node process start p50', pct(bare, 0.5), 'ms'],
    ['heddle ps p50', pct(ps, 0.5), 'ms', pct(ps, 0.5) / pct(bare, 0.5)],
    ['heddle ps p99', pct(ps, 0.99), 'ms'],
    ['heddle node ls --json p50', pct(nodes, 0.5), 'ms', pct(nodes, 0.5) / pct(bare, 0.5)],
    ['raw API call GET /v1/instances p50', pct(http, 0.5), 'ms'],
  ]);
} finally {
  daemon?.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
}
