// The namespace soak (issue 23): one cluster of many hosts (default 20) in namespaces, seeded trials
// of random network faults one after another for a duration, the trial kit's convergence check after
// each, and every 10 s (also while faults hold) the invariants that must hold at any moment: no order
// running twice in the process tables (the hosts hold a controller lease), every chain verifies, the
// controller answers. Ends with a summary (trials, faults by kind, duplicates, lost, slowest
// convergence) and the seed of the run and of every trial.
import { Rng } from '../rng.js';
import { runTrial, type TrialResult } from '../trial-kit.js';
import { DuplicateSampler } from './invariants.js';
import { NetCluster } from './net-cluster.js';
import { type NetTrialRecord, netTrial } from './net-trial.js';

/** How a soak runs. */
export interface SoakOptions {
  /** How long to keep starting trials, ms. */
  readonly durationMs: number;
  readonly hosts: number;
  /** The run's seed: every trial's seed is drawn from it. */
  readonly seed: number;
  /** The controller's dead_after, s (default 8: a 20-host cluster on a loaded machine needs slack). */
  readonly deadAfterSecs?: number;
  /** Every host's controller lease, s (default 3; below dead_after, so a partitioned copy stops first). */
  readonly leaseSecs?: number;
  /**
   * Run exactly these trial seeds (a soak's trials replayed on the same kind of cluster) instead of
   * drawing seeds until the duration is over.
   */
  readonly trials?: readonly number[];
  /** How often the standing invariants are checked, ms (default 10 s). */
  readonly checkEveryMs?: number;
  /** Called with a line for every trial and check that failed (and each trial's outcome). */
  readonly log?: (line: string) => void;
}

/** One trial's line in the summary. */
export interface SoakTrial {
  readonly seed: number;
  readonly ok: boolean;
  readonly faults: readonly string[];
  readonly landed: boolean | null;
  readonly elapsedMs: number;
  readonly convergeMs: number;
  /** Its problems (empty when ok). */
  readonly problems: readonly string[];
}

/** What a soak found. */
export interface SoakSummary {
  readonly seed: number;
  readonly hosts: number;
  readonly deadAfterSecs: number;
  readonly leaseSecs: number;
  readonly durationMs: number;
  readonly trials: readonly SoakTrial[];
  /** Faults by kind: how many ran, how many landed in their window. */
  readonly faults: Readonly<Record<string, { runs: number; landed: number }>>;
  /** Orders seen running twice in a process table (at any moment, or after convergence). */
  readonly duplicates: number;
  /** Acknowledged orders lost. */
  readonly lost: number;
  /** Chain verifications that failed. */
  readonly chainBreaks: number;
  /** Standing checks run (every checkEveryMs) and how many failed. */
  readonly checks: number;
  readonly checkFailures: readonly string[];
  readonly slowest: { readonly seed: number; readonly convergeMs: number } | null;
  readonly ok: boolean;
}

function count(problems: readonly string[], re: RegExp): number {
  return problems.filter((p) => re.test(p)).length;
}

/** Runs a soak (see the file comment); never throws for a failed trial (it is in the summary). */
export async function runSoak(o: SoakOptions): Promise<SoakSummary> {
  const log = o.log ?? (() => undefined);
  const t0 = Date.now();
  const rng = new Rng(o.seed);
  const start = (): Promise<NetCluster> =>
    NetCluster.startNet({ hosts: o.hosts, deadAfterSecs: o.deadAfterSecs ?? 8, leaseSecs: o.leaseSecs ?? 3 });
  let cluster = await start();
  const deadAfterSecs = cluster.deadAfterSecs;
  const leaseSecs = cluster.leaseSecs ?? 0;
  /** Trials whose reset failed (the cluster was replaced): failures of their own. */
  const resetFailures = new Map<number, string>();
  const records = new Map<number, NetTrialRecord>();
  const results: TrialResult[] = [];
  const checkFailures: string[] = [];
  let checks = 0;
  let checkDup = 0;
  let checkChains = 0;
  let sampler = new DuplicateSampler(cluster);
  let busy = false;
  /** While a cluster is being replaced there is nothing to check (its daemons are going or coming). */
  let replacing = false;
  const standing = setInterval(() => {
    if (busy || replacing) return;
    busy = true;
    (async () => {
      checks++;
      sampler.learn(await cluster.api().instances());
      const before = sampler.violations.length;
      await sampler.sample();
      for (const v of sampler.violations.slice(before)) {
        checkDup++;
        checkFailures.push(`+${v.at - t0} ms: ${v.what}`);
      }
      for (const c of await cluster.verifyChains()) {
        if (c.ok) continue;
        checkChains++;
        checkFailures.push(`+${Date.now() - t0} ms: ${c.problem ?? c.name}`);
      }
    })()
      .catch((err: unknown) => {
        checkFailures.push(`+${Date.now() - t0} ms: the controller could not be read: ${String(err)}`);
      })
      .finally(() => {
        busy = false;
      });
  }, o.checkEveryMs ?? 10_000);
  try {
    const replay = o.trials === undefined ? undefined : [...o.trials];
    while (replay === undefined ? Date.now() - t0 < o.durationMs : replay.length > 0) {
      const seed = replay === undefined ? rng.int(1, 0x7fff_ffff) : (replay.shift() ?? 0);
      let r: TrialResult;
      try {
        r = await runTrial(cluster, netTrial(seed, { records }), seed);
      } catch (err) {
        // The reset after the trial could not bring the cluster back to empty: the trial fails, and
        // the cluster is replaced (as the loopback suite's group runner does).
        const why = err instanceof Error ? err.message : String(err);
        resetFailures.set(seed, why);
        log(`FAIL seed ${seed}: ${why.slice(0, 4000)}`);
        replacing = true;
        while (busy) await new Promise((res) => setTimeout(res, 100));
        await cluster.teardown();
        cluster = await start();
        sampler = new DuplicateSampler(cluster);
        replacing = false;
        continue;
      }
      results.push(r);
      const rec = records.get(seed);
      log(
        `${r.ok ? 'ok  ' : 'FAIL'} seed ${seed} ${rec?.faults.map((f) => `${f.kind}${f.landed ? '' : ' (missed)'}`).join(' + ') ?? '?'} in ${r.elapsedMs} ms, converged in ${r.convergeMs} ms`,
      );
      if (!r.ok) log(r.report);
    }
  } finally {
    clearInterval(standing);
    while (busy) await new Promise((r) => setTimeout(r, 100));
    await cluster.teardown();
  }
  const trials: SoakTrial[] = [
    ...[...resetFailures].map(([seed, why]) => ({
      seed,
      ok: false,
      faults: records.get(seed)?.faults.map((f) => f.kind) ?? [],
      landed: null,
      elapsedMs: 0,
      convergeMs: 0,
      problems: [
        `the reset after the trial failed: ${why.split('the reset after the trial failed:')[1]?.trim() ?? why}`,
      ],
    })),
    ...results.map((r) => {
      const rec = records.get(r.seed);
      const problems = r.ok
        ? []
        : r.report
            .split('\n')
            .filter((l) => l.startsWith('  - '))
            .map((l) => l.slice(4));
      return {
        seed: r.seed,
        ok: r.ok,
        faults: rec?.faults.map((f) => f.kind) ?? [],
        landed: r.landed,
        elapsedMs: r.elapsedMs,
        convergeMs: r.convergeMs,
        problems,
      };
    }),
  ];
  const faults: Record<string, { runs: number; landed: number }> = {};
  for (const rec of records.values()) {
    for (const f of rec.faults) {
      const e = faults[f.kind] ?? { runs: 0, landed: 0 };
      e.runs++;
      if (f.landed) e.landed++;
      faults[f.kind] = e;
    }
  }
  const all = trials.flatMap((t) => t.problems);
  const duplicates =
    checkDup + count(all, /runs \d+ times|copies of|live instances \(expected exactly 1\)|ran twice/);
  const lost = count(all, /^acknowledged /);
  const chainBreaks = checkChains + count(all, /chain/);
  const slow = [...trials].sort((a, b) => b.convergeMs - a.convergeMs)[0];
  return {
    seed: o.seed,
    hosts: o.hosts,
    deadAfterSecs,
    leaseSecs,
    durationMs: Date.now() - t0,
    trials,
    faults,
    duplicates,
    lost,
    chainBreaks,
    checks,
    checkFailures,
    slowest: slow === undefined ? null : { seed: slow.seed, convergeMs: slow.convergeMs },
    ok: trials.length > 0 && trials.every((t) => t.ok) && checkFailures.length === 0,
  };
}

/** The summary as a Markdown table and lists (what docs/faults.md carries). */
export function formatSummary(s: SoakSummary): string {
  const failed = s.trials.filter((t) => !t.ok);
  const missed = s.trials.filter((t) => t.landed === false);
  const lines = [
    `Seed ${s.seed}, ${s.hosts} hosts, ${(s.durationMs / 60_000).toFixed(1)} min, dead_after ${s.deadAfterSecs} s, controller lease ${s.leaseSecs} s.`,
    '',
    '| measure | value |',
    '| --- | --- |',
    `| trials | ${s.trials.length} (${s.trials.length - failed.length} passed, ${failed.length} failed, ${missed.length} missed a window) |`,
    ...Object.entries(s.faults)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `| faults: ${k} | ${v.runs} (${v.landed} landed in their window) |`),
    `| duplicates | ${s.duplicates} |`,
    `| lost acknowledged orders | ${s.lost} |`,
    `| chain breaks | ${s.chainBreaks} |`,
    `| standing checks (every 10 s) | ${s.checks} (${s.checkFailures.length} failed) |`,
    `| slowest convergence | ${s.slowest === null ? '-' : `${s.slowest.convergeMs} ms (seed ${s.slowest.seed})`} |`,
    `| median convergence | ${median(s.trials.map((t) => t.convergeMs))} ms |`,
  ];
  if (failed.length > 0) {
    lines.push('', 'Failed trials:');
    for (const t of failed)
      lines.push(`- seed ${t.seed} (${t.faults.join(' + ')}): ${t.problems.slice(0, 3).join('; ')}`);
  }
  if (s.checkFailures.length > 0) {
    lines.push('', 'Standing checks that failed:');
    for (const f of s.checkFailures.slice(0, 20)) lines.push(`- ${f}`);
  }
  return lines.join('\n');
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}
