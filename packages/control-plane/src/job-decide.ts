import type { NodeFit } from './job-eligibility.js';

// What a job needs done to converge (docs/jobs.md, "Reconciliation"), decided from what is there: a
// pure function, so `heddle job plan` shows exactly what the reconciler would do.

/** A live instance of a job, as the decision sees it. */
export interface LiveJobInstance {
  readonly instance_id: string;
  readonly node_id: string;
  /** The job version it belongs to. */
  readonly version: number;
  /** Its health check held for min_healthy_time (and it still runs). */
  readonly healthy: boolean;
  /** It runs the same package, config values and mode as the desired version (it can be adopted in place). */
  readonly same: boolean;
  readonly placed_at_ms: number;
}

/** What the decision starts from. */
export interface JobDecideInput {
  readonly type: 'service' | 'system';
  /** Instances of a service job. */
  readonly count: number;
  /** The desired version. */
  readonly version: number;
  /** Every known node and whether the job may use it. */
  readonly fits: ReadonlyMap<string, NodeFit>;
  /** The job's live instances (dead ones are already forgotten). */
  readonly instances: readonly LiveJobInstance[];
  /** `update.max_parallel`: replacements in flight (placed, not yet healthy) at most. */
  readonly maxParallel: number;
  /** The rollout has failed: nothing of the desired version is placed. */
  readonly failed: boolean;
  /** Plan every replacement at once, ignoring `maxParallel` and health (what `job plan` shows). */
  readonly all?: boolean;
}

/** One instance to place: pinned to `node` (a system job) or where the engine chooses (null). */
export interface PlaceAction {
  readonly node: string | null;
  /** The old instance this one replaces (a rolling update), or null for a missing one. */
  readonly replaces: string | null;
}

/** One instance to take down and forget, and why. */
export interface RemoveAction {
  readonly instance_id: string;
  readonly node_id: string;
  readonly version: number;
  readonly reason: string;
}

/** What to do, in this order: adopt, place, then remove (a replacement is placed before the old one goes). */
export interface JobActions {
  /** Old-version instances that already run what the desired version runs: they become its instances. */
  readonly adopt: readonly string[];
  readonly place: readonly PlaceAction[];
  readonly remove: readonly RemoveAction[];
}

const byAge = (a: LiveJobInstance, b: LiveJobInstance): number =>
  a.placed_at_ms - b.placed_at_ms || (a.instance_id < b.instance_id ? -1 : 1);

/** Decides what `input`'s job needs done to converge (see {@link JobActions}). */
export function decideJob(input: JobDecideInput): JobActions {
  const remove: RemoveAction[] = [];
  const drop = (i: LiveJobInstance, reason: string): void => {
    remove.push({ instance_id: i.instance_id, node_id: i.node_id, version: i.version, reason });
  };
  const adopt: string[] = [];
  const current: LiveJobInstance[] = [];
  const old: LiveJobInstance[] = [];
  for (const i of [...input.instances].sort(byAge)) {
    const fit = input.fits.get(i.node_id);
    if (fit !== null) {
      drop(i, fit === undefined ? 'its node is no longer known' : fit);
    } else if (i.version === input.version) {
      current.push(i);
    } else if (i.same && !current.some((c) => c.node_id === i.node_id)) {
      adopt.push(i.instance_id);
      current.push({ ...i, version: input.version });
    } else {
      old.push(i);
    }
  }
  return input.type === 'system'
    ? decideSystem(input, current, old, adopt, remove)
    : decideService(input, current, old, adopt, remove);
}

function decideService(
  input: JobDecideInput,
  current: LiveJobInstance[],
  old: LiveJobInstance[],
  adopt: string[],
  remove: RemoveAction[],
): JobActions {
  const place: PlaceAction[] = [];
  const drop = (i: LiveJobInstance, reason: string): void => {
    remove.push({ instance_id: i.instance_id, node_id: i.node_id, version: i.version, reason });
  };
  // One instance of a version per node: a second on the same node would be the identical instance.
  const seen = new Set<string>();
  const keep: LiveJobInstance[] = [];
  for (const c of current) {
    if (seen.has(c.node_id)) drop(c, 'a second instance of the version on its node');
    else {
      seen.add(c.node_id);
      keep.push(c);
    }
  }
  // Surplus: the newest go first, unhealthy ones before healthy ones.
  const surplus = keep.length - input.count;
  if (surplus > 0) {
    const order = [...keep].sort((a, b) => Number(a.healthy) - Number(b.healthy) || byAge(b, a));
    for (const c of order.slice(0, surplus)) drop(c, `the job wants ${input.count} instances`);
  }
  const live = keep.length - Math.max(0, surplus);
  const healthy = keep.filter((c) => c.healthy).length;
  const want = Math.max(0, input.count - live);
  const deficit = Math.max(0, input.count - live - old.length);
  // An old instance goes once a healthy instance of the desired version stands in for it.
  const removable =
    input.all === true ? old.length : Math.max(0, Math.min(old.length, healthy + old.length - input.count));
  for (const o of old.slice(0, removable)) drop(o, `replaced by version ${input.version}`);
  if (!input.failed) {
    for (let n = 0; n < deficit; n++) place.push({ node: null, replaces: null });
    const inflight = live - healthy + deficit;
    const budget = input.all === true ? want : Math.max(0, input.maxParallel - inflight);
    const replace = Math.min(want - deficit, budget, old.length);
    // Each replacement names an old instance that is not removed now (the planned ones, for a plan).
    const standing = input.all === true ? old : old.slice(removable);
    for (const o of standing.slice(0, replace)) place.push({ node: null, replaces: o.instance_id });
  }
  return { adopt, place, remove };
}

function decideSystem(
  input: JobDecideInput,
  current: LiveJobInstance[],
  old: LiveJobInstance[],
  adopt: string[],
  remove: RemoveAction[],
): JobActions {
  const place: PlaceAction[] = [];
  const drop = (i: LiveJobInstance, reason: string): void => {
    remove.push({ instance_id: i.instance_id, node_id: i.node_id, version: i.version, reason });
  };
  const onNode = new Map<string, LiveJobInstance>();
  for (const c of current) {
    if (onNode.has(c.node_id)) drop(c, 'a second instance of the version on its node');
    else onNode.set(c.node_id, c);
  }
  const inflight = [...onNode.values()].filter((c) => !c.healthy).length;
  let budget = input.all === true ? Number.POSITIVE_INFINITY : Math.max(0, input.maxParallel - inflight);
  const oldOn = new Map<string, LiveJobInstance[]>();
  for (const o of old) oldOn.set(o.node_id, [...(oldOn.get(o.node_id) ?? []), o]);
  const nodes = [...input.fits.entries()]
    .filter(([, fit]) => fit === null)
    .map(([id]) => id)
    .sort();
  for (const node of nodes) {
    if (onNode.has(node) || input.failed) continue;
    const olds = oldOn.get(node) ?? [];
    if (olds.length === 0) place.push({ node, replaces: null });
    else if (budget > 0) {
      budget--;
      place.push({ node, replaces: olds[0]?.instance_id ?? null });
    }
  }
  for (const [node, olds] of oldOn) {
    const standIn = onNode.get(node);
    if (input.all === true || standIn?.healthy === true)
      for (const o of olds) drop(o, `replaced by version ${input.version}`);
  }
  return { adopt, place, remove };
}
