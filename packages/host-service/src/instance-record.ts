import type { JsonValue } from '@heddle/envelope';
import type { CogRoute } from '@heddle/package';
import type { InstanceHandle, InstanceState, InstanceStatus, RunMode, WorkloadHost } from '@heddle/runtime';

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
  /** The decision id of the place or load that produced it. */
  readonly decisionId: string;
  /** The controller that placed it (node id). */
  readonly requester: string;
  readonly placedAtMs: number;
  /** Set by a start, cleared by a stop: the operator wants it running. */
  desiredRunning: boolean;
  /** The decision id of the last mutating request on it. */
  lastDecisionId: string;
}

/** An adapter status as it travels (snake case, only the fields that are set). */
export function statusJson(status: InstanceStatus): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = { state: status.state };
  if (status.pid !== undefined) out.pid = status.pid;
  if (status.startedAtMs !== undefined) out.started_at_ms = status.startedAtMs;
  if (status.lastExitCode !== undefined) out.last_exit_code = status.lastExitCode;
  if (status.lastSignal !== undefined) out.last_signal = status.lastSignal;
  if (status.runs !== undefined) out.runs = status.runs;
  if (status.detail !== undefined) out.detail = status.detail;
  return out;
}

/** The adapter's status of `p`, or `unknown` with the reason when the adapter cannot say. */
export async function readStatus(p: PlacedInstance): Promise<InstanceStatus> {
  try {
    return await p.host.status(p.handle);
  } catch (err) {
    const state: InstanceState = 'unknown';
    return { instanceId: p.instanceId, state, detail: `status failed: ${(err as Error).message}` };
  }
}

/** One instance as `status` and `place` report it (docs/protocol.md, "Method bodies"). */
export function instanceView(p: PlacedInstance, status: InstanceStatus): { [key: string]: JsonValue } {
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
    state: status.state,
    status: statusJson(status),
  };
}
