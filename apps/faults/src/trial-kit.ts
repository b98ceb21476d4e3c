// What every trial gets (a cluster, a seeded generator, a ledger of acknowledged placements, a place
// helper that records outcomes), how a trial is run (fault, then convergence, then reset), and the
// reset that brings a cluster back to empty between trials.
import { errorMessage } from '@heddle/cli-kit';
import type { PlaceOrderInput, TransferProgress } from '@heddle/control-plane';
import { ApiError, type PlaceAnswer } from '@heddle/operator-api';
import type { Cluster } from './cluster.js';
import { type Acknowledged, converge, describeSnapshot, hostRuns } from './converge.js';
import { killNativeProcesses } from './daemons.js';
import type { PackageKind } from './packages.js';
import { Rng, rerunHint } from './rng.js';

/** How one place call ended. */
export interface PlaceOutcome {
  /** `placed`, `unsettled`, or the API error code (`indeterminate`, `refused`, `controller_not_running`, ...). */
  readonly outcome: string;
  readonly result?: PlaceAnswer;
  readonly message?: string;
}

/** What a trial works with. */
export interface TrialContext {
  readonly cluster: Cluster;
  readonly rng: Rng;
  readonly seed: number;
  /** Placements the API answered `placed` for: the convergence check holds them. */
  readonly acknowledged: Acknowledged[];
  /** Extra problems the trial found itself (behaviour the issue demands beyond convergence). */
  readonly problems: string[];
  /** What happened, in order (printed with a failure). */
  readonly notes: string[];
  /** Orders that outlive trials (kept by the reset). */
  readonly keep: ReadonlySet<string>;
  /** How long the convergence may take (default 20 s). */
  convergeMs: number;
  /**
   * Whether the fault landed inside the window the trial claims (set by trials that claim one, with
   * the evidence from the daemons' own records); undefined for trials that claim none.
   */
  window: { readonly landed: boolean; readonly evidence: string } | undefined;
  /** The fault landed inside its window: `evidence` says how that is known. */
  landed(evidence: string): void;
  /** The fault missed its window (the trial did not run what it claims): `why`. */
  missed(why: string): void;
  note(line: string): void;
  /** Places `kind` (an interval cog with an interval of its own, so every order is told apart). */
  place(kind: PackageKind, o?: PlaceOptions): Promise<PlaceOutcome>;
}

/** Options of {@link TrialContext.place}. */
export interface PlaceOptions {
  readonly prefer?: readonly string[];
  readonly avoid?: readonly string[];
  readonly node?: string;
  readonly onProgress?: (p: TransferProgress) => void;
}

/** One kind of trial. */
export interface TrialKind {
  /** The group it belongs to (one cluster per group). */
  readonly group: string;
  /** What it does, for the test name. */
  readonly title: string;
  /** The feature of issue 8 it waits on when it fails on today's code (for the report). */
  readonly waitsOn: string;
  /** How long the reset after the trial may take, ms (default 20 s). */
  readonly resetMs?: number;
  /** The command that reruns the trial of `seed` alone (default: the loopback suite's). */
  rerun?(seed: number): string;
  run(ctx: TrialContext): Promise<void>;
  /**
   * More checks once the cluster converged (before the reset), from outside: their problems fail the
   * trial. Optional (the namespace trials check every namespace's process table here).
   */
  afterConverge?(ctx: TrialContext): Promise<readonly string[]>;
}

/** The result of one trial. */
export interface TrialResult {
  readonly group: string;
  readonly title: string;
  readonly seed: number;
  readonly ok: boolean;
  readonly elapsedMs: number;
  readonly convergeMs: number;
  /** The failure, with the seed, the rerun command, the diff, the notes and recent daemon logs. */
  readonly report: string;
  /** What happened, in order. */
  readonly notes: readonly string[];
  /**
   * For a trial that claims a window: whether its fault landed inside it (false: the trial did not
   * run what it claims; counted as not run); null for a trial that claims none.
   */
  readonly landed: boolean | null;
  /** The evidence of the landing, or why it missed ('' when no window is claimed). */
  readonly landing: string;
}

let intervals = 100;

const GONE: ReadonlySet<string> = new Set(['unloaded', 'lost', 'rescheduled', 'revoked']);

/** Runs one trial of `kind` with `seed` on `cluster`: the fault, then convergence, then a reset. */
export async function runTrial(
  cluster: Cluster,
  kind: TrialKind,
  seed: number,
  keep: ReadonlySet<string> = new Set(),
): Promise<TrialResult> {
  const t0 = Date.now();
  const ctx: TrialContext = {
    cluster,
    rng: new Rng(seed),
    seed,
    acknowledged: [],
    problems: [],
    notes: [],
    keep,
    convergeMs: 20_000,
    window: undefined,
    landed(evidence) {
      this.window = { landed: true, evidence };
      this.note(`the fault landed in its window: ${evidence}`);
    },
    missed(why) {
      this.window = { landed: false, evidence: why };
      this.note(`the fault missed its window (not run): ${why}`);
    },
    note(line) {
      this.notes.push(`+${Date.now() - t0}ms ${line}`);
    },
    async place(pkgKind, o = {}) {
      const pkg = cluster.packages[pkgKind];
      if (pkg === undefined) throw new Error(`the cluster has no ${pkgKind} package`);
      const order: PlaceOrderInput = {
        package_dir: pkg.dir,
        mode: { type: 'interval', secs: ++intervals },
        ...(o.prefer === undefined ? {} : { prefer: o.prefer }),
        ...(o.avoid === undefined ? {} : { avoid: o.avoid }),
        ...(o.node === undefined ? {} : { node: o.node }),
      };
      try {
        const result = await cluster
          .api()
          .place(order, o.onProgress === undefined ? {} : { onProgress: o.onProgress });
        const tried = result.attempts.map(
          (a) =>
            `${a.node_id.slice(0, 8)} ${a.outcome}${a.code ? ` (${a.code}: ${(a.reason ?? '').slice(0, 200)})` : ''}`,
        );
        this.note(`place ${pkgKind}: attempts ${tried.join(', ') || 'none'}`);
        if (result.status === 'placed' && result.instance !== null) {
          const { instance_id, order_id, node_id } = result.instance;
          this.acknowledged.push({ instance_id, order_id, node_id });
          this.note(`place ${pkgKind}: placed ${instance_id} on ${node_id.slice(0, 8)}`);
        } else {
          this.note(`place ${pkgKind}: ${result.status} (decision ${result.decision_id?.slice(0, 8)})`);
        }
        return { outcome: result.status, result };
      } catch (err) {
        const code = err instanceof ApiError ? err.code : 'error';
        this.note(`place ${pkgKind}: ${code}: ${errorMessage(err).slice(0, 200)}`);
        return { outcome: code, message: errorMessage(err) };
      }
    },
  };
  let failure: string | undefined;
  try {
    await kind.run(ctx);
  } catch (err) {
    failure = `the trial itself failed: ${errorStack(err)}`;
  }
  // Whatever the trial did, every daemon must be back for the check (a trial may leave one down).
  await cluster.ensureUp();
  // A trial that already failed gets a short wait: the diff is for the report, the verdict is known.
  const bound =
    failure !== undefined || ctx.problems.length > 0 ? Math.min(ctx.convergeMs, 5_000) : ctx.convergeMs;
  const c = await converge(cluster, ctx.acknowledged, bound);
  ctx.note(`convergence ${c.ok ? 'reached' : 'NOT reached'} after ${c.elapsedMs} ms`);
  const after =
    c.ok && kind.afterConverge !== undefined
      ? await kind
          .afterConverge(ctx)
          .catch((err: unknown) => [`the checks after convergence failed: ${errorStack(err)}`])
      : [];
  const crashes = cluster.crashes.splice(0);
  const problems = [
    ...(failure === undefined ? [] : [failure]),
    ...crashes,
    ...ctx.problems,
    ...c.problems,
    ...after,
  ];
  const ok = problems.length === 0;
  const report = ok
    ? ''
    : [
        `trial "${kind.group}: ${kind.title}" failed with seed ${seed}`,
        `rerun: ${kind.rerun?.(seed) ?? rerunHint(seed)}`,
        'problems:',
        ...problems.map((p) => `  - ${p}`),
        'what happened:',
        ...ctx.notes.map((n) => `  ${n}`),
        describeSnapshot(c.snapshot),
        cluster.recentLogs(),
      ].join('\n');
  const reset = await resetCluster(cluster, keep, kind.resetMs);
  if (reset.length > 0)
    throw new ResetError(`${report}\nthe reset after the trial failed:\n${reset.join('\n')}`);
  return {
    group: kind.group,
    title: kind.title,
    seed,
    ok,
    elapsedMs: Date.now() - t0,
    convergeMs: c.elapsedMs,
    report,
    notes: ctx.notes,
    landed: ctx.window?.landed ?? null,
    landing: ctx.window?.evidence ?? '',
  };
}

/** The reset after a trial could not bring the cluster back to empty: the cluster must be replaced. */
export class ResetError extends Error {}

/**
 * Brings the cluster back to empty (except the orders in `keep`): every daemon up, every proxy healed,
 * every placement stopped and unloaded through the API, whatever a host still holds removed directly,
 * every stray native process killed. Returns what could not be cleaned (empty on success).
 */
export async function resetCluster(
  cluster: Cluster,
  keep: ReadonlySet<string>,
  timeoutMs = 20_000,
): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  let left: string[] = [];
  while (Date.now() < until) {
    await cluster.ensureUp();
    left = [];
    const api = cluster.api();
    const kept = new Set<string>();
    const stuck = new Set<string>();
    const placements = await api.instances().catch((err: unknown) => {
      left.push(`the controller: ${errorMessage(err)}`);
      return [];
    });
    for (const p of placements) {
      if (keep.has(p.order_id)) {
        kept.add(p.instance_id);
        continue;
      }
      cluster.retired.add(p.order_id);
      if (GONE.has(p.state)) continue;
      await api.stop(p.instance_id, 0).catch(() => {});
      await api.unload(p.instance_id).catch((err: unknown) => {
        // The host does not have it (it lost it): only forgetting the node clears the record.
        if (err instanceof ApiError && /unknown_instance/.test(err.message)) stuck.add(p.node_id);
        else left.push(`unload ${p.instance_id}: ${errorMessage(err)}`);
      });
    }
    for (const nodeId of stuck) {
      // The operator's way out (docs/operator-guide.md 5.10): rm --force marks them lost, add again.
      const h = cluster.host(nodeId);
      await api
        .removeNode(nodeId, { force: true })
        .catch((err: unknown) => left.push(`node rm ${nodeId}: ${errorMessage(err)}`));
      await api
        .addNode(h.url, { tier: 'paired', key: h.publicKey })
        .catch((err: unknown) => left.push(`node add ${nodeId}: ${errorMessage(err)}`));
    }
    for (const h of cluster.hosts) {
      const listing = await cluster.listing(h.index).catch((err: unknown) => {
        left.push(`host ${h.index}: ${errorMessage(err)}`);
        return undefined;
      });
      for (const inst of listing?.instances ?? []) {
        if (kept.has(inst.instance_id)) continue;
        await cluster.observer.remove(cluster.address(h.index), inst.instance_id).catch((err: unknown) => {
          left.push(
            `host ${h.index} ${inst.instance_id} (${hostRuns(inst) ? 'running' : inst.state}): ${errorMessage(err)}`,
          );
        });
      }
      if (listing !== undefined) killNativeProcesses(h.dataDir, kept);
    }
    if (left.length === 0) {
      // Every node alive again for the controller (a restarted host is described on the next tick),
      // so that the next trial's engine sees what it would see on a healthy cluster.
      const nodes = await api.nodes().catch(() => []);
      const notAlive = nodes.filter((n) => n.liveness !== 'alive');
      if (notAlive.length > 0 || nodes.length !== cluster.hosts.length) {
        left.push(...notAlive.map((n) => `node ${n.node_id} is ${n.liveness} (${n.last_error ?? ''})`));
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      // Quiet for a tick: nothing new was placed meanwhile (a reschedule, a settle) that must go too.
      await new Promise((r) => setTimeout(r, 1_200));
      const again = await api.instances().catch(() => placements);
      const known = new Set(placements.map((p) => p.instance_id));
      const fresh = again.filter(
        (p) => !known.has(p.instance_id) && !keep.has(p.order_id) && !GONE.has(p.state),
      );
      if (fresh.length === 0) return [];
      left.push(...fresh.map((p) => `${p.instance_id} was placed during the reset (${p.state})`));
      continue;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return left;
}

/** The stack of an `Error` (its message when it has none), or the value as a string. */
function errorStack(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
