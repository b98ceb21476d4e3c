#!/usr/bin/env node
// The fault-injection soak (docs/faults.md): runs the trials of apps/faults in rounds with random seeds
// for a duration, prints every seed with its outcome, and a summary with the seeds that failed (each
// one reruns alone with HEDDLE_FAULT_SEED=<seed> npx vitest run apps/faults).
//
//   node scripts/soak.mjs [--minutes N] [--per-group K] [--seed-base B]
//
// --minutes: how long to keep starting rounds (default 30); --per-group: trials of each group per round
// (default 3); --seed-base: first round's base (default: from the clock; printed). Exit 0 when every
// trial passed, 1 otherwise.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(args[i + 1]);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`soak: --${name} needs a whole number`);
    process.exit(2);
  }
  return n;
};
const minutes = flag('minutes', 30);
const perGroup = flag('per-group', 3);
let base = flag('seed-base', Math.floor(Date.now() / 1000) % 1_000_000);

const until = Date.now() + minutes * 60_000;
const dir = mkdtempSync(join(tmpdir(), 'heddle-soak-'));
const all = [];
let round = 0;
console.log(`soak: ${minutes} min, ${perGroup} trial(s) per group per round, seed base ${base}`);
while (Date.now() < until) {
  round++;
  const report = join(dir, `round-${round}.json`);
  const t0 = Date.now();
  const run = spawnSync('npx', ['vitest', 'run', 'apps/faults/src/faults.test.ts'], {
    cwd: root,
    env: {
      ...process.env,
      HEDDLE_FAULT_TRIALS: String(perGroup),
      HEDDLE_FAULT_BASE: String(base),
      HEDDLE_FAULT_REPORT: report,
    },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  let results = [];
  try {
    results = JSON.parse(readFileSync(report, 'utf8'));
  } catch {
    console.log(`round ${round}: no report (vitest exited ${run.status}); its output ends with:`);
    console.log((run.stdout + run.stderr).split('\n').slice(-40).join('\n'));
  }
  for (const r of results) {
    all.push(r);
    console.log(
      `round ${round} ${r.ok ? 'ok  ' : 'FAIL'} seed ${String(r.seed).padStart(8)} ${r.group.padEnd(22)} ${(r.elapsedMs / 1000).toFixed(1).padStart(6)} s${r.ok ? '' : `  rerun: HEDDLE_FAULT_SEED=${r.seed} npx vitest run apps/faults`}`,
    );
  }
  console.log(`round ${round}: ${results.length} trial(s) in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  base += perGroup;
}
rmSync(dir, { recursive: true, force: true });

const failed = all.filter((r) => !r.ok);
console.log(
  `\nsummary: ${all.length} trial(s) in ${round} round(s), ${all.length - failed.length} passed, ${failed.length} failed`,
);
const groups = [...new Set(all.map((r) => r.group))];
for (const g of groups) {
  const rs = all.filter((r) => r.group === g);
  const bad = rs.filter((r) => !r.ok);
  const mean = rs.reduce((n, r) => n + r.elapsedMs, 0) / rs.length / 1000;
  console.log(
    `  ${g.padEnd(22)} ${String(rs.length - bad.length).padStart(4)}/${rs.length} passed, mean ${mean.toFixed(1)} s${bad.length ? `; failed seeds ${bad.map((r) => r.seed).join(', ')}` : ''}`,
  );
}
if (failed.length > 0) {
  console.log('\nfirst failure:');
  console.log(failed[0].report);
}
process.exit(failed.length === 0 ? 0 : 1);
