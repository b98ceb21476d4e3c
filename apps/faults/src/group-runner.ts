// Runs trials on their clusters: the trials of one cluster one after another, clusters side by side
// (each started with its first trial), with the cluster's keepers, and a fresh cluster when a reset
// could not bring the old one back to empty.

import { errorMessage } from '@heddle/cli-kit';
import type { ClusterOptions } from './cluster.js';
import { Cluster } from './cluster.js';
import { clusterOf, trialOf } from './groups.js';
import { rerunHint } from './rng.js';
import { ResetError, runTrial, type TrialResult } from './trial-kit.js';

interface GroupState {
  cluster: Cluster | undefined;
  lock: Promise<unknown>;
  keep: Set<string>;
}

/** Clusters and locks of every group of a run, and every result. */
export class GroupRunner {
  readonly #groups = new Map<string, GroupState>();
  /** Every trial result so far, in the order they ended. */
  readonly results: TrialResult[] = [];

  #state(name: string): GroupState {
    let s = this.#groups.get(name);
    if (s === undefined) {
      s = { cluster: undefined, lock: Promise.resolve(), keep: new Set() };
      this.#groups.set(name, s);
    }
    return s;
  }

  /** Runs the trial of `seed` (its group, kind and cluster follow from it) once its cluster's previous trial ended. */
  run(seed: number): Promise<TrialResult> {
    const { group, kind } = trialOf(seed);
    const where = clusterOf(seed);
    const s = this.#state(where.key);
    const next = s.lock.then(async () => {
      const failed = (report: string): TrialResult => {
        const r: TrialResult = {
          group: group.name,
          title: kind.title,
          seed,
          ok: false,
          elapsedMs: 0,
          convergeMs: 0,
          report: `trial "${group.name}: ${kind.title}" failed with seed ${seed}\nrerun: ${rerunHint(seed)}\n${report}`,
          notes: [],
          landed: null,
          landing: '',
        };
        this.results.push(r);
        return r;
      };
      let cluster: Cluster;
      try {
        cluster = await this.#cluster(where.options, s);
      } catch (err) {
        // Cluster.start tears down what it started; a cluster whose keepers failed goes too.
        await s.cluster?.teardown();
        s.cluster = undefined;
        return failed(`the cluster could not be started: ${errorMessage(err).slice(0, 4000)}`);
      }
      try {
        const r = await runTrial(cluster, kind, seed, s.keep);
        this.results.push(r);
        return r;
      } catch (err) {
        // A reset that failed, or the harness itself: this cluster is not trusted for the next trial.
        await cluster.teardown();
        s.cluster = undefined;
        return failed(err instanceof ResetError ? err.message : `the harness failed: ${errorStack(err)}`);
      }
    });
    s.lock = next.catch(() => {});
    return next;
  }

  async #cluster(options: ClusterOptions & { readonly keepers?: boolean }, s: GroupState): Promise<Cluster> {
    if (s.cluster === undefined) {
      s.cluster = await Cluster.start(options);
      s.keep.clear();
    }
    if (options.keepers === true) await ensureKeepers(s.cluster, s.keep);
    return s.cluster;
  }

  /** Tears down every cluster. */
  async teardown(): Promise<void> {
    for (const s of this.#groups.values()) await s.cluster?.teardown();
  }
}

/**
 * One pinned WASI instance per host, kept across trials: the host then holds the package, so a place
 * of it needs no fetch and acts at once (what a dropped answer needs to be interesting). A keeper that
 * is not running any more is replaced.
 */
async function ensureKeepers(cluster: Cluster, keep: Set<string>): Promise<void> {
  const api = cluster.api();
  const placements = await api.instances();
  for (const [i, h] of cluster.hosts.entries()) {
    const ok = placements.some(
      (p) => keep.has(p.order_id) && p.node_id === h.nodeId && p.state === 'running' && p.desired_running,
    );
    if (ok) continue;
    const pkg = cluster.packages.wasi;
    if (pkg === undefined) throw new Error('keepers need the wasi package');
    const r = await api.place({
      package_dir: pkg.dir,
      node: h.nodeId,
      mode: { type: 'interval', secs: 50 + i },
    });
    if (r.status !== 'placed' || r.order_id === null) throw new Error(`keeper on host ${i}: ${r.status}`);
    keep.add(r.order_id);
  }
}

/** The stack of an `Error` (its message when it has none), or the value as a string. */
function errorStack(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
