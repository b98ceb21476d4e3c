// Seeded trials of the host fault kinds of issue 23 (kinds/host-kinds.ts): a host's clock skewed
// past the 30 s window, a host's clock drifting past the warning threshold (both with Debian's
// libfaketime), a host's disk filling up mid-transfer (small tmpfs package stores). One namespace
// cluster whose hosts run under libfaketime, with package stores of their own; the trials run one
// after another with the same trial kit, convergence check and namespace invariants as the network
// trials. HEDDLE_HOST_FAULT_BASE=<n> moves the seeds (default 2390), HEDDLE_HOST_FAULT_SEED=<seed> reruns one
// (`hostRerunHint`). Side run: npx vitest run --config vitest.side.config.ts apps/faults/src/netns/host-fault-trials

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackage } from '../packages.js';
import { runTrial, type TrialResult } from '../trial-kit.js';
import { faketimeSkipReason } from './faketime.js';
import { BIG_PACKAGE_BYTES, mountPackageStores } from './kinds/disk-full.js';
import { HOST_FAULT_KINDS } from './kinds/host-kinds.js';
import { NetCluster } from './net-cluster.js';
import { leadKind, type NetTrialRecord, netTrial } from './net-trial.js';
import { netnsSkipReason } from './sys.js';

const skip = netnsSkipReason() ?? faketimeSkipReason();
if (skip !== undefined) console.warn(`[host faults] skipped: ${skip}`);

const base = Number(process.env.HEDDLE_HOST_FAULT_BASE ?? 2390);
const one = process.env.HEDDLE_HOST_FAULT_SEED;
const seeds = one !== undefined ? [Number(one)] : Array.from({ length: 4 }, (_, i) => base + i);
const records = new Map<number, NetTrialRecord>();

function hostRerunHint(seed: number): string {
  return `HEDDLE_HOST_FAULT_SEED=${seed} npx vitest run --config vitest.side.config.ts apps/faults/src/netns/host-fault-trials.side.test.ts`;
}
const results: TrialResult[] = [];
let cluster: NetCluster | undefined;
let unmount: (() => void) | undefined;

describe.skipIf(skip !== undefined)('host faults on namespaces: clock and disk', () => {
  beforeAll(async () => {
    cluster = await NetCluster.startNet({
      hosts: 3,
      deadAfterSecs: 5,
      leaseSecs: 2,
      faketime: true,
      packages: ['wasi', 'native'],
    });
    cluster.packages['native-big'] = await buildPackage(
      'native-big',
      join(cluster.root, 'packages'),
      cluster.operator,
      BIG_PACKAGE_BYTES,
    );
    unmount = await mountPackageStores(cluster);
  }, 300_000);

  afterAll(async () => {
    // Lazily unmounted first, so that the teardown can remove the directories they were on.
    unmount?.();
    await cluster?.teardown();
  }, 120_000);

  for (const seed of seeds) {
    const kind = leadKind(seed, HOST_FAULT_KINDS);
    it(`${kind.name}: ${kind.title} [seed ${seed}]`, async (t) => {
      if (cluster === undefined) throw new Error('no cluster');
      const r = await runTrial(cluster, netTrial(seed, { kinds: HOST_FAULT_KINDS, records }), seed);
      results.push(r);
      const rec = records.get(seed);
      console.log(
        `[host faults] ${r.ok ? 'ok  ' : 'FAIL'} seed ${seed} ${rec?.faults.map((f) => f.kind).join('+') ?? kind.name} in ${r.elapsedMs} ms (converged in ${r.convergeMs} ms)${r.ok ? '' : `; rerun: ${hostRerunHint(seed)}`}`,
      );
      if (r.landed !== true || process.env.HEDDLE_FAULT_VERBOSE)
        for (const l of r.notes) console.log(`  ${l}`);
      expect(r.ok, r.report).toBe(true);
      if (r.landed === false) t.skip(`the fault missed its window: ${r.landing}`);
    }, 300_000);
  }

  it.skipIf(one !== undefined)('every host kind led a trial and landed; no duplicate seen', () => {
    expect(results.length).toBe(seeds.length);
    const led = new Set(seeds.map((s) => leadKind(s, HOST_FAULT_KINDS).name));
    expect([...led].sort()).toEqual(HOST_FAULT_KINDS.map((k) => k.name).sort());
    const missed = results.filter((r) => r.landed !== true).map((r) => `${r.seed}: ${r.landing}`);
    expect(missed, missed.join('\n')).toEqual([]);
    const dup = [...records.values()].flatMap((r) => r.duplicatesSeen);
    expect(dup, dup.join('\n')).toEqual([]);
  });
});
