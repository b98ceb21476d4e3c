// The namespace soak from the command line (docs/faults.md):
//   node --import tsx apps/faults/src/netns/soak-main.ts [--minutes 60] [--hosts 20] [--seed N] [--out file]
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
const minutes = flag('minutes', 60);
const hosts = flag('hosts', 20);
const seed = flag('seed', randomSeed());

const support = netnsSupport();
if (!support.ok) {
  console.error(`soak: skipped: ${support.reason}`);
  process.exit(77);
}
console.log(`soak: ${minutes} min, ${hosts} hosts, seed ${seed} (rerun: --seed ${seed})`);
const summary = await runSoak({
  durationMs: minutes * 60_000,
  hosts,
  seed,
  log: (l) => console.log(`soak: ${l}`),
});
console.log(formatSummary(summary));
if (out !== undefined) writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
process.exit(summary.ok ? 0 : 1);
