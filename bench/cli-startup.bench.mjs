// Startup of the three CLIs' `--help` and `--version` (each a fresh process), versus a bare
// `node -e 0` in the same run: the ratio says what a CLI pays before it does anything. Imports
// nothing: runs the built CLIs (`pnpm build` first). `--runs=N` (default 20).
import { spawnSync } from 'node:child_process';
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
for (const [app, name] of [
  ['controller', 'heddle'],
  ['host', 'heddle-host'],
  ['seed', 'heddle-seed'],
]) {
  for (const flag of ['--help', '--version']) {
    const t = time([bin(app), flag]);
    rows.push([`${name} ${flag} p50`, t, 'ms', t / bare]);
  }
}
report(`CLI startup, ${RUNS} runs each (fresh process per run)`, rows);
