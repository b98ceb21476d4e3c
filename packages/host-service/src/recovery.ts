import type { JsonValue } from '@heddle/envelope';
import { canTransition, InstanceLife, type LifecycleState } from '@heddle/model';
import {
  type CogBody,
  type KindRegistry,
  NO_REVOCATIONS,
  type TrustAnchors,
  verifyPackage,
} from '@heddle/package';
import {
  type InstanceHandle,
  type InstanceState,
  type RuntimeWorkload,
  type WorkloadRuntime,
  workloadFromPackage,
} from '@heddle/runtime';
import { messageOf } from './errors.js';
import { type HostState, REVOCATION_GRACE_MS } from './host-state.js';
import { moveLife } from './instance-life.js';
import { isContinuous, newSupervision, type PlacedInstance, readStatus } from './instance-record.js';
import type { InstanceStore, StoredInstance } from './instance-store.js';
import { refusalOf } from './refusal-map.js';

/** What {@link recoverInstances} needs besides the host's state. */
export interface RecoveryOptions {
  /** Where the instances were kept. */
  readonly store: InstanceStore;
  /** This node's own anchors (to rebuild a revoked instance's workload, only to tear it down). */
  readonly anchors: TrustAnchors;
  readonly kinds?: KindRegistry;
}

/** What a restart found, for the host's log. */
export interface RecoveryReport {
  /** Adopted again: listed with `adopted: true` in the lifecycle state the adapter reports. */
  readonly adopted: {
    readonly instance_id: string;
    readonly life: LifecycleState;
    readonly pid: number | null;
  }[];
  /** Could not be adopted: chained lifecycle -> `lost`, noted departed `lost`, forgotten. */
  readonly lost: { readonly instance_id: string; readonly reason: string }[];
  /** Revoked since: torn down (forced, not gated), chained, noted departed `revoked`, forgotten. */
  readonly revoked: { readonly instance_id: string; readonly reason: string }[];
  /** The instances file could not be used (the host started empty). */
  readonly problem?: { readonly reason: string; readonly kept_as: string | null };
}

/**
 * Re-adopts the instances a previous run of this host placed (docs/host.md, "Restarts and re-adoption"): for each
 * record of `<data_dir>/instances.json`, checks the revocation list first (revoked: torn down through
 * the adapter, not gated, chained, forgotten); rebuilds the workload from the held package, verified
 * again against this node's anchors and revocations; and adopts it through its route's WorkloadHost
 * (gated as `workload.load` with the teardown waiver, chained with phase `readopted`). An adopted
 * instance is listed again with `adopted: true`, its lifecycle moved to what the adapter reports (an
 * exited process meant to run is left to the supervisor). One that cannot be adopted (a WASI run died
 * with the host, the package is gone, the adapter refuses) is chained lifecycle -> `lost` with the
 * reason and noted departed `lost`. The file is rewritten with what was adopted. Never throws for a
 * bad record or file.
 */
export async function recoverInstances(state: HostState, options: RecoveryOptions): Promise<RecoveryReport> {
  const loaded = options.store.load();
  const report: {
    adopted: RecoveryReport['adopted'][number][];
    lost: RecoveryReport['lost'][number][];
    revoked: RecoveryReport['revoked'][number][];
    problem?: NonNullable<RecoveryReport['problem']>;
  } = { adopted: [], lost: [], revoked: [] };
  if (loaded.problem !== undefined) {
    report.problem = { reason: loaded.problem.reason, kept_as: loaded.problem.keptAs ?? null };
  }
  const forgotten = new Set<string>();
  for (const rec of loaded.instances) {
    if (state.instances.has(rec.instance_id)) continue;
    try {
      // Under the instance's lock: the supervisor may already be checking what is listed.
      const outcome = await state.locks.run(rec.instance_id, () => recoverOne(state, options, rec));
      if (outcome.kind === 'adopted') report.adopted.push(outcome.entry);
      else {
        forgotten.add(rec.manifest_hash);
        (outcome.kind === 'lost' ? report.lost : report.revoked).push({
          instance_id: rec.instance_id,
          reason: outcome.reason,
        });
      }
    } catch (err) {
      state.onError(err);
      forgotten.add(rec.manifest_hash);
      report.lost.push({
        instance_id: rec.instance_id,
        reason: `recovery failed: ${messageOf(err)}`,
      });
    }
  }
  for (const hash of forgotten) state.releasePackage(hash);
  state.persist();
  return report;
}

type Outcome =
  | { readonly kind: 'adopted'; readonly entry: RecoveryReport['adopted'][number] }
  | { readonly kind: 'lost' | 'revoked'; readonly reason: string };

const handleOf = (rec: StoredInstance): InstanceHandle => ({
  instanceId: rec.handle.instance_id,
  runtime: rec.handle.runtime,
  workloadId: rec.handle.workload_id,
  version: rec.handle.version,
  ...(rec.handle.store_installed === undefined ? {} : { storeInstalled: rec.handle.store_installed }),
});

/** The life an instance restarts with: its stored state (`loaded` when none was stored). */
const lifeOf = (rec: StoredInstance, atMs: number): InstanceLife =>
  new InstanceLife(rec.instance_id, rec.life ?? 'loaded', atMs);

async function recoverOne(state: HostState, o: RecoveryOptions, rec: StoredInstance): Promise<Outcome> {
  const extra: { [key: string]: JsonValue } = { workload: rec.name, phase: 'recovery' };
  const host = state.routes.get(rec.route);
  const life = { life: lifeOf(rec, state.now()) };
  const lose = async (why: string): Promise<Outcome> => {
    // Reported lost, it is placed again elsewhere: whatever of it still runs here must not run on.
    const reason = `${why}${await abandon(state, host?.adapter, handleOf(rec))}`;
    await moveLife(state, life, 'lost', reason.slice(0, 300), extra);
    state.departed.note({
      instance_id: rec.instance_id,
      reason: 'lost',
      at_ms: state.now(),
      decision_id: null,
    });
    return { kind: 'lost', reason };
  };
  if (host === undefined) return lose(`no ${rec.route} adapter on this node any more`);
  const handle = handleOf(rec);
  // Revocations first: a revoked instance is never adopted, only taken down.
  const byId = state.revocations.firstRevoked({
    packageId: rec.package_id,
    signerKeys: [],
    artifactHashes: [],
  });
  let workload: RuntimeWorkload | undefined;
  let revokedWhy: string | undefined =
    byId === undefined
      ? undefined
      : `revoked ${byId.kind} ${byId.ref}${byId.reason === undefined ? '' : ` (${byId.reason})`}`;
  if (revokedWhy === undefined) {
    try {
      const got = await state.packages.obtain(rec.manifest_hash, async () => {
        throw new Error(`the package ${rec.manifest_hash} is no longer held`);
      });
      workload = workloadFromPackage(got.verified);
    } catch (err) {
      const r = refusalOf(err, 'recovery');
      if (!/revoked/.test(r.reason)) return lose(`package unusable: ${r.reason}`);
      revokedWhy = r.reason;
    }
  }
  if (revokedWhy !== undefined) return tearDownRevoked(state, o, rec, handle, life, revokedWhy, extra);
  if (workload === undefined) return lose('package unusable: it could not be read');
  try {
    await host.adopt(handle, workload);
  } catch (err) {
    const r = refusalOf(err, 'adopt');
    return lose(`not adopted (${r.code}): ${r.reason}`);
  }
  const placed: PlacedInstance = {
    instanceId: rec.instance_id,
    handle,
    route: rec.route,
    host,
    name: rec.name,
    version: rec.version,
    variant: rec.variant,
    packageId: rec.package_id,
    manifestHash: rec.manifest_hash,
    mode: rec.mode,
    values: rec.values,
    decisionId: rec.decision_id,
    requester: rec.requester,
    placedAtMs: rec.placed_at_ms,
    desiredRunning: rec.desired_running,
    lastDecisionId: rec.last_decision_id,
    life: life.life,
    leaseStopped: rec.lease_stopped,
    supervision: newSupervision(),
    adopted: true,
  };
  state.instances.set(rec.instance_id, placed);
  state.departed.forget(rec.instance_id);
  const status = await readStatus(placed);
  const target = adoptedLife(rec, status.state);
  if (target !== placed.life.state) {
    if (!canTransition(placed.life.state, target)) {
      // The stored state cannot lead there directly: the restart lost track of it, then found it.
      // cast: the record is built here, before anyone else holds it; its readonly life is set once.
      (placed as { life: InstanceLife }).life = new InstanceLife(rec.instance_id, 'lost', state.now());
    }
    await moveLife(state, placed, target, `readopted after a restart (adapter: ${status.state})`, extra);
  }
  return {
    kind: 'adopted',
    entry: { instance_id: rec.instance_id, life: placed.life.state, pid: status.pid ?? null },
  };
}

/**
 * Stops what `adapter` still runs of an instance that was not adopted (`WorkloadRuntime.abandon`);
 * the note for the lost reason. Never throws: a failure is told to `onError` and noted.
 */
async function abandon(
  state: HostState,
  adapter: WorkloadRuntime | undefined,
  handle: InstanceHandle,
): Promise<string> {
  if (adapter?.abandon === undefined) return '';
  try {
    return (await adapter.abandon(handle, REVOCATION_GRACE_MS)) ? '; its process was stopped' : '';
  } catch (err) {
    state.onError(err);
    return `; its process could not be stopped: ${messageOf(err)}`;
  }
}

/**
 * The lifecycle state an adopted instance is in, from what its adapter reports: running, loaded or
 * stopped as such; a `once` run that ended is finished; a run that ended while meant to run keeps its
 * stored state (the supervisor sees the exit and restarts it), or, stopped by a host shutdown, is
 * `restarting` (the supervisor starts it at once).
 */
function adoptedLife(rec: StoredInstance, adapter: InstanceState): LifecycleState {
  const stored = rec.life ?? 'loaded';
  switch (adapter) {
    case 'running':
      return 'running';
    case 'loaded':
      return 'loaded';
    case 'stopped':
      return 'stopped';
    case 'failed':
      return rec.desired_running ? stored : 'failed';
    default:
      if (rec.mode.type === 'once' && stored === 'running') return 'finished';
      // Stopped by a host shutdown (an operator's stop clears desired_running, the lease sets
      // lease_stopped): the supervisor starts it again (docs/host.md, "Restarts and re-adoption").
      if (rec.desired_running && !rec.lease_stopped && isContinuous(rec.mode) && stored === 'stopped') {
        return 'restarting';
      }
      if (rec.desired_running && !rec.lease_stopped) return stored;
      return ['loaded', 'stopped', 'finished', 'failed'].includes(stored) ? stored : 'stopped';
  }
}

/**
 * A revoked instance found at recovery: adopted by the adapter alone (the gate would deny it, and the
 * revocation is the authority), stopped and unloaded; chained lifecycle -> `revoked` -> `unloaded`
 * with `forced_by_revocation`; noted departed `revoked`.
 */
async function tearDownRevoked(
  state: HostState,
  o: RecoveryOptions,
  rec: StoredInstance,
  handle: InstanceHandle,
  life: { readonly life: InstanceLife },
  why: string,
  extra: { [key: string]: JsonValue },
): Promise<Outcome> {
  const host = state.routes.get(rec.route);
  let note = why;
  if (host !== undefined) {
    try {
      const verified = await verifyPackage<CogBody>(state.packages.pathOf(rec.manifest_hash), {
        anchors: o.anchors,
        revocations: NO_REVOCATIONS,
        ...(o.kinds === undefined ? {} : { kinds: o.kinds }),
      });
      await host.adapter.adopt(handle, workloadFromPackage(verified));
      await host.adapter.stop(handle, REVOCATION_GRACE_MS).catch(() => undefined);
      await host.adapter.unload(handle);
    } catch (err) {
      // Nothing left to adopt (a WASI run died with the host) is already down.
      note = `${why}; teardown: ${messageOf(err)}`;
    }
  }
  const forced = { ...extra, forced_by_revocation: note.slice(0, 300) };
  await moveLife(state, life, 'revoked', note.slice(0, 200), forced);
  await moveLife(state, life, 'unloaded', 'torn down by the revocation', forced);
  state.departed.note({
    instance_id: rec.instance_id,
    reason: 'revoked',
    at_ms: state.now(),
    decision_id: null,
  });
  return { kind: 'revoked', reason: note };
}
