import type { CogRoute, InstanceLife, RunMode } from '@heddle/model';
import type { AdapterStatus, ConfigValue, InstanceView } from '@heddle/protocol';
import type { InstanceHandle, InstanceState, InstanceStatus, WorkloadHost } from '@heddle/runtime';
import { messageOf } from './errors.js';

/** An instance this host placed: what it came from, who asked, and what the operator wants of it. */
export interface PlacedInstance {
  readonly instanceId: string;
  readonly handle: InstanceHandle;
  /** The route (and so the WorkloadHost) that runs it. */
  readonly route: CogRoute;
  readonly host: WorkloadHost;
  /** The cog id and version. */
  readonly name: string;
  readonly version: string;
  readonly variant: string;
  readonly packageId: string;
  readonly manifestHash: string;
  readonly mode: RunMode;
  /** The config values it was placed with (the supervisor's TCP readiness probe reads `port`). */
  readonly values: Readonly<Record<string, ConfigValue>>;
  /** The decision id of the place or load that produced it. */
  readonly decisionId: string;
  /** The controller that placed it (node id). */
  readonly requester: string;
  readonly placedAtMs: number;
  /** Set by a start, cleared by a stop: the operator wants it running. */
  desiredRunning: boolean;
  /** The decision id of the last mutating request on it. */
  lastDecisionId: string;
  /** Its lifecycle on this host (docs/lifecycle.md); every move is chained as `workload.lifecycle`. */
  readonly life: InstanceLife;
  /**
   * Stopped by this host because no controller was heard from for the lease period (`desiredRunning`
   * stays true); the supervisor leaves it alone until a `workload.start` clears the flag.
   */
  leaseStopped: boolean;
  /** The supervisor's bookkeeping of it. */
  readonly supervision: Supervision;
  /** True when a restart of the host found it and adopted it again (see recovery.ts). */
  readonly adopted?: boolean;
}

/** What the supervisor keeps per instance (see supervisor.ts). */
export interface Supervision {
  /** When each supervisor restart in the rolling budget window was attempted (Unix ms, oldest first). */
  restartsAtMs: number[];
  /** When the restart it waits for is due (set while the lifecycle is `restarting`). */
  restartDueAtMs: number | undefined;
  /** Readiness checks failed in a row (listener mode). */
  readinessMisses: number;
}

/** Supervision of an instance nothing happened to yet. */
export function newSupervision(): Supervision {
  return { restartsAtMs: [], restartDueAtMs: undefined, readinessMisses: 0 };
}

/** Forgets the supervisor's history of `p` (an operator's start makes a fresh budget). */
export function resetSupervision(p: PlacedInstance): void {
  p.supervision.restartsAtMs.length = 0;
  p.supervision.restartDueAtMs = undefined;
  p.supervision.readinessMisses = 0;
}

/** True for run modes that run until stopped (`listener`, `interval`): an exit is a failure. */
export function isContinuous(mode: RunMode): boolean {
  return mode.type !== 'once';
}

/** An adapter status as it travels (snake case, only the fields that are set). */
export function statusJson(status: InstanceStatus): AdapterStatus {
  return {
    state: status.state,
    ...(status.pid === undefined ? {} : { pid: status.pid }),
    ...(status.startedAtMs === undefined ? {} : { started_at_ms: status.startedAtMs }),
    ...(status.lastExitCode === undefined ? {} : { last_exit_code: status.lastExitCode }),
    ...(status.lastSignal === undefined ? {} : { last_signal: status.lastSignal }),
    ...(status.runs === undefined ? {} : { runs: status.runs }),
    ...(status.detail === undefined ? {} : { detail: status.detail }),
  };
}

/** The adapter's status of `p`, or `unknown` with the reason when the adapter cannot say. */
export async function readStatus(p: PlacedInstance): Promise<InstanceStatus> {
  try {
    return await p.host.status(p.handle);
  } catch (err) {
    const state: InstanceState = 'unknown';
    return { instanceId: p.instanceId, state, detail: `status failed: ${messageOf(err)}` };
  }
}

/** One instance as `status` and `place` report it (docs/protocol.md, "Method bodies"). */
export function instanceView(p: PlacedInstance, status: InstanceStatus): InstanceView {
  return {
    instance_id: p.instanceId,
    workload: p.name,
    version: p.version,
    route: p.route,
    runtime: p.handle.runtime,
    variant: p.variant,
    package_id: p.packageId,
    manifest_hash: p.manifestHash,
    mode: p.mode.type === 'interval' ? { type: 'interval', secs: p.mode.secs } : { type: p.mode.type },
    decision_id: p.decisionId,
    last_decision_id: p.lastDecisionId,
    requester: p.requester,
    placed_at_ms: p.placedAtMs,
    desired_running: p.desiredRunning,
    life: p.life.state,
    lease_stopped: p.leaseStopped,
    restarts: p.supervision.restartsAtMs.length,
    adopted: p.adopted === true,
    state: status.state,
    status: statusJson(status),
  };
}
