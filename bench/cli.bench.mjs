// (f) heddle CLI against running daemons on loopback, each command a fresh process as an operator runs
// it: `heddle place` of a native listener cog onto a real `heddle-host` (placed, fetched, verified,
// started: the answer says running), versus the same order POSTed straight to the API (the API's own
// time) and a bare `node -e ''` start, all in the same run; also `heddle ps` and `heddle node ls`.
// Target: `heddle place` p50 < 100 ms on loopback (an absolute figure: it holds on an idle machine;
// on a loaded one compare the ratio to the raw API call, whose difference is the CLI's own cost).
// Imports nothing: runs the built CLIs (`pnpm build` first). `--runs=N` (default 20).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { report } from './harness.mjs';

const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 20);
const root = new URL('..', import.meta.url).pathname;
const HEDDLE = join(root, 'apps/controller/dist/bin.js');
const HOST = join(root, 'apps/host/dist/bin.js');
const dir = mkdtempSync(join(tmpdir(), 'heddle-cli-bench-'));
chmodSync(dir, 0o711);
const home = join(dir, 'controller');
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const POLICY = {
  version: 1,
  name: 'bench',
  rules: [
    {
      id: 'all',
      effect: 'permit',
      actions: ['workload.place', 'workload.load', 'workload.start', 'workload.stop', 'workload.unload'],
      kinds: ['cog'],
      max_network: 'egress',
    },
  ],
};
const procs = [];

async function time(fn) {
  const out = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

// CPU time of a child (user + system, ms), reported by the child itself at exit: robust on a loaded
// machine, where wall-clock times grow with the competition for the cores.
const CPU_HOOK = join(dir, 'cpu-hook.cjs');
writeFileSync(
  CPU_HOOK,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the hook's own source, a template literal in it
  "process.on('exit', () => { const u = process.cpuUsage(); require('node:fs').writeSync(2, `\\ncpu-ms ${(u.user + u.system) / 1000}\\n`); });\n",
);
const cpuSamples = new Map();
function cpuOf(label, stderr) {
  const m = /\ncpu-ms ([0-9.]+)\n/.exec(stderr);
  if (m !== null) cpuSamples.set(label, [...(cpuSamples.get(label) ?? []), Number(m[1])]);
}

function cli(bin, args, label) {
  const r = spawnSync(
    process.execPath,
    [...(label === undefined ? [] : ['--require', CPU_HOOK]), bin, ...args],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr || r.stdout}`);
  if (label !== undefined) cpuOf(label, r.stderr);
  return r.stdout;
}
const heddle = (...args) => cli(HEDDLE, [...args, '--home', home]);
const timedHeddle = (label, ...args) => cli(HEDDLE, [...args, '--home', home], label);

/** Starts a daemon and resolves with its `listening` log line. */
function daemon(bin, args) {
  const proc = spawn(process.execPath, [bin, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
  procs.push(proc);
  let buf = '';
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (c) => {
      buf += c;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const j = JSON.parse(line);
          if (j.msg === 'listening') resolve(j);
        } catch {}
      }
    });
    proc.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
}

try {
  const publisher = JSON.parse(cli(HEDDLE, ['keygen', '--out', 'publisher.key', '--json']));
  writeFileSync(
    join(dir, 'trust.json'),
    JSON.stringify({
      schema: 'heddle.trust.v1',
      keys: [{ id: 'p', role: 'publisher', public_key: publisher.public_key }],
    }),
  );
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY));
  const ctl = JSON.parse(
    cli(HEDDLE, [
      'init',
      '--home',
      home,
      '--trust',
      'trust.json',
      '--policy',
      'policy.json',
      '--api-port',
      '0',
      '--json',
    ]),
  );
  const hostHome = join(dir, 'host');
  cli(HOST, [
    'init',
    '--dir',
    hostHome,
    '--listen',
    '127.0.0.1:0',
    '--controller',
    ctl.public_key,
    '--trust',
    'trust.json',
    '--routes',
    'native',
  ]);
  const hostConfig = join(hostHome, 'heddle-host.json');
  const c = JSON.parse(readFileSync(hostConfig, 'utf8'));
  writeFileSync(join(hostHome, 'policy.json'), JSON.stringify(POLICY));
  c.policy_file = 'policy.json';
  c.native = process.getuid?.() === 0 ? { run_as_user: 'nobody' } : { allow_host_user: true };
  writeFileSync(hostConfig, JSON.stringify(c));
  const host = await daemon(HOST, ['run', '--config', hostConfig]);
  await daemon(HEDDLE, ['controller', 'run', '--home', home]);
  heddle('node', 'add', host.url, '--tier', 'paired');
  cli(HEDDLE, ['pkg', 'build', join(root, 'examples/native-cog'), '-o', 'cog', '--key', 'publisher.key']);
  const { url } = JSON.parse(readFileSync(join(home, 'api.json'), 'utf8'));
  const token = readFileSync(join(home, 'api.token'), 'utf8').trim();
  // A fresh connection per call, as a CLI process makes.
  const api = (method, path, body) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        new URL(path, url),
        {
          method,
          agent: false,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () =>
            res.statusCode < 300
              ? resolve(JSON.parse(text))
              : reject(new Error(`${method} ${path}: ${text}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  heddle('place', 'cog', '--mode', 'listener', '--set', 'label=warm'); // the package is added, the host has it

  const bare = await time(() => {
    const r = spawnSync(process.execPath, ['--require', CPU_HOOK, '-e', ''], { encoding: 'utf8' });
    cpuOf('bare', r.stderr);
  });
  const placeCli = await time((i) => {
    const out = JSON.parse(
      timedHeddle('place', 'place', 'cog', '--mode', 'listener', '--set', `label=cli${i}`, '--json'),
    );
    if (out.instance?.state !== 'running')
      throw new Error(`heddle place: not running: ${JSON.stringify(out)}`);
  });
  const packageDir = join(dir, 'cog');
  const placeApi = await time(async (i) => {
    const out = await api('POST', '/v1/place', {
      package_dir: packageDir,
      mode: { type: 'listener' },
      values: { label: `api${i}` },
      idempotency_key: `bench-api-${i}`,
    });
    if (out.instance?.state !== 'running')
      throw new Error(`POST /v1/place: not running: ${JSON.stringify(out)}`);
  });
  const ps = await time(() => heddle('ps'));
  const nodes = await time(() => heddle('node', 'ls', '--json'));
  const getInstances = await time(() => api('GET', '/v1/instances'));
  const p50 = (xs) => pct(xs, 0.5);
  report(
    `heddle CLI against a controller and a host on loopback, ${RUNS} runs each (fresh process per command)`,
    [
      ['bare node process start p50', p50(bare), 'ms'],
      ['POST /v1/place straight to the API p50', p50(placeApi), 'ms'],
      ['POST /v1/place straight to the API p95', pct(placeApi, 0.95), 'ms'],
      ['heddle place p50 (vs the API)', p50(placeCli), 'ms', p50(placeCli) / p50(placeApi)],
      ['heddle place p95 (vs the API)', pct(placeCli, 0.95), 'ms', pct(placeCli, 0.95) / pct(placeApi, 0.95)],
      [
        'heddle place p50 minus the API p50 (CLI cost)',
        p50(placeCli) - p50(placeApi),
        'ms',
        (p50(placeCli) - p50(placeApi)) / p50(bare),
      ],
      ['heddle place p50 vs the 100 ms target', p50(placeCli), 'ms', p50(placeCli) / 100, undefined],
      ['heddle ps p50 (vs bare node)', p50(ps), 'ms', p50(ps) / p50(bare)],
      ['heddle node ls --json p50 (vs bare node)', p50(nodes), 'ms', p50(nodes) / p50(bare)],
      ['raw API call GET /v1/instances p50', p50(getInstances), 'ms'],
    ],
  );
  const cpuBare = p50(cpuSamples.get('bare') ?? [0]);
  const cpuPlace = p50(cpuSamples.get('place') ?? [0]);
  report('CPU time of the processes themselves (user + system, p50; robust to a loaded machine)', [
    ['node -e "" CPU', cpuBare, 'ms'],
    ['heddle place CPU (vs node -e "")', cpuPlace, 'ms', cpuPlace / cpuBare],
    ['heddle place CPU beyond a bare node', cpuPlace - cpuBare, 'ms'],
  ]);
  console.log(`  target heddle place p50 < 100 ms: ${p50(placeCli) < 100 ? 'met' : 'NOT met'}`);
} finally {
  for (const p of procs) p.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  for (const p of procs) p.kill('SIGKILL');
  spawnSync('pkill', ['-KILL', '-f', dir]);
  rmSync(dir, { recursive: true, force: true });
}
