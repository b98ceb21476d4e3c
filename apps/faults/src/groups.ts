// The groups of trials, the clusters they run on, and how a seed picks its trial: a seed's group is
// `seed % GROUPS.length`, its kind within the group `floor(seed / GROUPS.length)` modulo the kinds.
import type { ClusterOptions } from './cluster.js';
import type { TrialKind } from './trial-kit.js';
import {
  controllerKillDuringPlace,
  controllerKillDuringReschedule,
  hostKillDuringPlace,
  hostKillDuringTransfer,
  hostKillWhileRunning,
  partitionHeal,
  proxyCut,
  proxyDelay,
  proxyDrop,
} from './trials.js';

/** The clusters trials run on (groups with the same cluster share it, one trial at a time). */
export const CLUSTERS: Readonly<Record<string, ClusterOptions & { readonly keepers?: boolean }>> = {
  'kill-place': { hosts: 2, packages: ['wasi', 'native'] },
  // Hosts behind proxies in pass mode (transparent until the transfer trial throttles one).
  'kill-transfer': { hosts: 2, proxied: true, packages: ['native-big'] },
  // Host kills while running and controller kills during place (both short) share one cluster.
  'kill-running': { hosts: 2, packages: ['wasi', 'native'] },
  reschedule: { hosts: 2, packages: ['wasi'] },
  // Keepers: one pinned WASI instance per host, so hosts hold the package and act at once.
  proxy: { hosts: 2, proxied: true, packages: ['wasi', 'native'], keepers: true },
  partition: { hosts: 2, proxied: true, packages: ['wasi', 'native'] },
};

/** A group of trials: one or more kinds, run on one of {@link CLUSTERS}. */
export interface TrialGroup {
  readonly name: string;
  /** The key of its cluster in {@link CLUSTERS}. */
  readonly cluster: string;
  /** Spread its trials over this many clusters of that kind, side by side (default 1). */
  readonly spread?: number;
  readonly kinds: readonly TrialKind[];
  /** Trials in CI. */
  readonly ci: number;
}

/** Every group, in seed order: a seed's group is `GROUPS[seed % GROUPS.length]`. */
export const GROUPS: readonly TrialGroup[] = [
  { name: 'host-place', cluster: 'kill-place', kinds: [hostKillDuringPlace], ci: 3 },
  { name: 'host-transfer', cluster: 'kill-transfer', kinds: [hostKillDuringTransfer], ci: 3 },
  { name: 'host-running', cluster: 'kill-running', kinds: [hostKillWhileRunning], ci: 4 },
  { name: 'controller-place', cluster: 'kill-running', kinds: [controllerKillDuringPlace], ci: 7 },
  {
    name: 'controller-reschedule',
    cluster: 'reschedule',
    spread: 2,
    kinds: [controllerKillDuringReschedule],
    ci: 2,
  },
  { name: 'proxy', cluster: 'proxy', kinds: [proxyDrop, proxyCut, proxyDelay], ci: 11 },
  { name: 'partition', cluster: 'partition', kinds: [partitionHeal], ci: 2 },
];

/** The cluster instance a seed runs on: `<cluster>` or, for a spread group, `<cluster>#<n>`. */
export function clusterOf(seed: number): {
  key: string;
  options: ClusterOptions & { readonly keepers?: boolean };
} {
  const { group } = trialOf(seed);
  const options = CLUSTERS[group.cluster];
  if (options === undefined) throw new Error(`group ${group.name}: no cluster ${group.cluster}`);
  const spread = group.spread ?? 1;
  const key = spread > 1 ? `${group.cluster}#${Math.floor(seed / GROUPS.length) % spread}` : group.cluster;
  return { key, options };
}

/** The group and the kind of trial a seed runs. */
export function trialOf(seed: number): { group: TrialGroup; kind: TrialKind } {
  // cast: an index modulo the (non-empty) list's length is in range; the same for the kinds below.
  const group = GROUPS[seed % GROUPS.length] as TrialGroup;
  const kind = group.kinds[Math.floor(seed / GROUPS.length) % group.kinds.length] as TrialKind;
  return { group, kind };
}

/** The seeds CI runs: `ci` per group, `GROUPS.length * k + group index` for k = 1..ci. */
export function ciSeeds(): number[] {
  return GROUPS.flatMap((g, gi) => Array.from({ length: g.ci }, (_, k) => GROUPS.length * (k + 1) + gi));
}

/**
 * The seeds to run, from the environment: `HEDDLE_FAULT_SEED` (one seed), `HEDDLE_FAULT_SEEDS`
 * (comma-separated), `HEDDLE_FAULT_TRIALS=N` (N per group from `HEDDLE_FAULT_BASE`, default the
 * time), else the CI list.
 */
export function seedsFromEnv(env: Readonly<Record<string, string | undefined>>): number[] {
  const parse = (s: string): number => {
    const n = Number(s.trim());
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a seed: ${JSON.stringify(s)}`);
    return n;
  };
  if (env.HEDDLE_FAULT_SEED) return [parse(env.HEDDLE_FAULT_SEED)];
  if (env.HEDDLE_FAULT_SEEDS) return env.HEDDLE_FAULT_SEEDS.split(',').filter(Boolean).map(parse);
  if (env.HEDDLE_FAULT_TRIALS) {
    const n = parse(env.HEDDLE_FAULT_TRIALS);
    const base = env.HEDDLE_FAULT_BASE
      ? parse(env.HEDDLE_FAULT_BASE)
      : Math.floor(Date.now() / 1000) % 1_000_000;
    return GROUPS.flatMap((_, gi) => Array.from({ length: n }, (_, k) => GROUPS.length * (base + k) + gi));
  }
  return ciSeeds();
}
