// The fault-injection suite of issue 8 (docs/faults.md): seeded trials against real daemons, each
// followed by the convergence check. Groups run side by side (one cluster each), the trials of a
// group one after another. HEDDLE_FAULT_SEED=<seed> reruns one trial; HEDDLE_FAULT_TRIALS=N runs N
// per group; HEDDLE_FAULT_REPORT=<file> writes every result as JSON (scripts/soak.mjs reads it).
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { GroupRunner } from './group-runner.js';
import { clusterOf, seedsFromEnv, trialOf } from './groups.js';
import { rerunHint } from './rng.js';
import { windowShortfalls } from './windows.js';

const runner = new GroupRunner();
const seeds = seedsFromEnv(process.env);

// Every trial starts at once and waits for its cluster: the trials of one cluster run one after
// another, clusters side by side. Round-robin order, so the report reads cluster by cluster.
const clusters = [...new Set(seeds.map((s) => clusterOf(s).key))];
const ordered = interleave(clusters.map((c) => seeds.filter((s) => clusterOf(s).key === c)));
vi.setConfig({ maxConcurrency: Math.max(ordered.length, 1) });

function interleave(lists: readonly (readonly number[])[]): number[] {
  const out: number[] = [];
  for (let i = 0; lists.some((l) => l.length > i); i++) {
    for (const l of lists) {
      const seed = l[i];
      if (seed !== undefined) out.push(seed);
    }
  }
  return out;
}

afterAll(async () => {
  await runner.teardown();
  const report = process.env.HEDDLE_FAULT_REPORT;
  if (report) writeFileSync(report, `${JSON.stringify(runner.results, null, 2)}\n`);
}, 60_000);

describe.concurrent('fault injection', () => {
  for (const seed of ordered) {
    const { group, kind } = trialOf(seed);
    it(`${group.name}: ${kind.title} [seed ${seed}]`, async (t) => {
      const r = await runner.run(seed);
      const missed = r.landed === false ? ` (not run: ${r.landing})` : '';
      console.log(
        `[faults] ${r.ok ? 'ok  ' : 'FAIL'} ${group.name} seed ${seed} in ${r.elapsedMs} ms (converged in ${r.convergeMs} ms)${r.ok ? '' : `; rerun: ${rerunHint(seed)}`}${missed}`,
      );
      if (process.env.HEDDLE_FAULT_VERBOSE) for (const n of r.notes) console.log(`  ${n}`);
      expect(r.ok, r.report).toBe(true);
      // A fault that missed the window its trial claims: the trial did not run what it says.
      if (r.landed === false) t.skip(`the fault missed its window: ${r.landing}`);
    }, 900_000); // includes waiting for the cluster's earlier trials; each trial bounds itself
  }
});

describe('fault windows', () => {
  it('enough trials landed their fault inside the window they claim', () => {
    expect(runner.results.length).toBe(ordered.length);
    const short = windowShortfalls(runner.results);
    expect(short, short.join('\n')).toEqual([]);
  });
});
