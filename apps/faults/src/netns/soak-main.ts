// The namespace soak from the command line (docs/faults.md):
//   node --import tsx apps/faults/src/netns/soak-main.ts [--minutes 60] [--hosts 20] [--seed N]
//     [--dead-after 8] [--lease 3] [--out file] [--trials seed,seed,...]
// --trials replays those trials of a soak (same cluster size and timers) instead of drawing seeds.
// Prints every trial as it ends, then the summary table; --out also writes the summary and every
// trial (with its seed) as JSON. Exit 0 when every trial and check passed, 1 otherwise, 2 on bad
// arguments; 77 (skipped) when network namespaces cannot be made here (not root).
import { writeFileSync } from 'node:fs';
import { randomSeed } from '../rng.js';
import { formatSummary, runSoak } from './soak.js';
import { netnsSupport } from './sys.js';

const args = process.argv.slice(2);
function flag(name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(args[i + 1]);
  if (!Number.isFinite(n) || n < 0) {
    console.error(`soak: --${name} needs a number, got ${String(args[i + 1])}`);
    process.exit(2);
  }
  return n;
}
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
const trialsArg = args.includes('--trials') ? (args[args.indexOf('--trials') + 1] ?? '') : undefined;
const trials = trialsArg?.split(',').map((x) => Number(x.trim()));
if (trials !== undefined && (trials.length === 0 || trials.some((n) => !Number.isSafeInteger(n)))) {
  console.error(`soak: --trials needs seeds separated by commas, got ${String(trialsArg)}`);
  process.exit(2);
}
const minutes = flag('minutes', 60);
const hosts = flag('hosts', 20);
const seed = flag('seed', randomSeed());
const deadAfterSecs = flag('dead-after', 8);
const leaseSecs = flag('lease', 3);

const support = netnsSupport();
if (!support.ok) {
  console.error(`soak: skipped: ${support.reason}`);
  process.exit(77);
}
console.log(
  trials === undefined
    ? `soak: ${minutes} min, ${hosts} hosts, seed ${seed} (rerun: --seed ${seed})`
    : `soak: replaying ${trials.length} trial(s) on ${hosts} hosts`,
);
const summary = await runSoak({
  durationMs: minutes * 60_000,
  hosts,
  seed,
  deadAfterSecs,
  leaseSecs,
  ...(trials === undefined ? {} : { trials }),
  log: (l) => console.log(`soak: ${l}`),
});
console.log(formatSummary(summary));
if (out !== undefined) writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
process.exit(summary.ok ? 0 : 1);
