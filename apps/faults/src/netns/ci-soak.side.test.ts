// The CI version of the namespace soak (docs/faults.md): HEDDLE_SOAK_MINUTES (CI: 5; unset: skipped)
// of random seeded network faults on 20 hosts (HEDDLE_SOAK_HOSTS), in the side run that
// scripts/test.mjs starts beside the main one (vitest.side.config.ts; the main run leaves
// *.side.test.ts out), its result counted in the final `N passed, N failed`. HEDDLE_SOAK_SEED replays
// a run.
import { expect, it } from 'vitest';
import { randomSeed } from '../rng.js';
import { formatSummary, runSoak } from './soak.js';
import { netnsSkipReason } from './sys.js';

const asked = process.env.HEDDLE_SOAK_MINUTES;
const skip =
  asked === undefined ? 'skipped: set HEDDLE_SOAK_MINUTES to run the namespace soak' : netnsSkipReason();
if (skip !== undefined) console.warn(`[soak] ${skip}`);

const minutes = Number(asked ?? 5);
const hosts = Number(process.env.HEDDLE_SOAK_HOSTS ?? 20);
const seed = process.env.HEDDLE_SOAK_SEED === undefined ? randomSeed() : Number(process.env.HEDDLE_SOAK_SEED);

it.skipIf(skip !== undefined)(
  `a ${minutes}-minute soak of ${hosts} hosts: no duplicate, nothing lost, every chain verifies [seed ${seed}]`,
  async () => {
    const s = await runSoak({
      durationMs: minutes * 60_000,
      hosts,
      seed,
      log: (l) => {
        if (!l.startsWith('ok')) console.log(`[soak] ${l}`);
      },
    });
    const table = formatSummary(s);
    console.log(`[soak] rerun: HEDDLE_SOAK_SEED=${seed}\n${table}`);
    expect(s.trials.length).toBeGreaterThan(0);
    expect({ duplicates: s.duplicates, lost: s.lost, chainBreaks: s.chainBreaks }, table).toEqual({
      duplicates: 0,
      lost: 0,
      chainBreaks: 0,
    });
    expect(s.ok, table).toBe(true);
  },
  (minutes + 10) * 60_000,
);
