// Startup of the three CLIs' `--help` and `--version` (each a fresh process), versus a bare
// `node -e 0` in the same run: the ratio says what a CLI pays before it does anything. Imports
// nothing: runs the built CLIs (`pnpm build` first). `--runs=N` (default 20). Target (f): `heddle
// --help` at most 1.5x `node -e 0` (lower is better; printed on its own line).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { report } from './harness.mjs';

const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 20);
const bin = (app) => new URL(`../apps/${app}/dist/bin.js`, import.meta.url).pathname;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function time(args) {
  const out = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  }
  return pct(out, 0.5);
}

const bare = time(['-e', '0']);
const rows = [['node -e 0 p50', bare, 'ms']];
let heddleHelp = 0;
for (const [app, name] of [
  ['controller', 'heddle'],
  ['host', 'heddle-host'],
  ['seed', 'heddle-seed'],
]) {
  for (const flag of ['--help', '--version']) {
    const t = time([bin(app), flag]);
    if (name === 'heddle' && flag === '--help') heddleHelp = t;
    rows.push([`${name} ${flag} p50`, t, 'ms', t / bare]);
  }
}
report(`CLI startup, ${RUNS} runs each (fresh process per run)`, rows);
console.log(`  target heddle --help <= 1.5x node -e 0: ${heddleHelp / bare <= 1.5 ? 'met' : 'NOT met'}`);

// What every run of each CLI loads before it looks at its arguments: the files bin.js imports
// statically (a command's own code is imported only when it runs).
function staticBytes(app, start = 'bin.js') {
  const dir = new URL(`../apps/${app}/dist/`, import.meta.url).pathname;
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/^(?:import|export)[^'"]*?from\s*"\.\/([^"]+)"|^import\s*"\.\/([^"]+)"/gm))
      walk(m[1] ?? m[2]);
  };
  walk(start);
  return [...seen].reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}
report(
  'JavaScript loaded by every run (bin.js and its static imports)',
  ['controller', 'host', 'seed'].map((app) => [`${app} dist/bin.js graph`, staticBytes(app), 'bytes']),
);
// What `heddle place` loads on top (its command module and its static imports): the API client and
// its schemas, without the control plane, the wire or the gate (see bench/cli.bench.mjs for its time).
const controllerDist = new URL('../apps/controller/dist/', import.meta.url).pathname;
const placeModule = readdirSync(controllerDist).find((f) => /^place-[A-Z0-9]+\.js$/.test(f));
if (placeModule !== undefined) {
  report('JavaScript loaded by heddle place (its command module and its static imports)', [
    ['controller place command graph', staticBytes('controller', placeModule), 'bytes'],
  ]);
}
