import {
  type CtlMethod,
  type CtlRequest,
  DEFAULT_GRACE_MS,
  DEFAULT_LOG_LINES,
  type EvidenceView,
  type HostListingAnswer,
  type InstanceBody,
  type LogsAnswer,
  type MethodAnswer,
  parseRequestBody,
  Refusal,
} from '@heddle/protocol';
import type { RunEvidence } from '@heddle/runtime';
import { requireInstanceId } from './bodies.js';
import type { HostState } from './host-state.js';
import { moveLife } from './instance-life.js';
import {
  instanceView,
  type PlacedInstance,
  readStatus,
  resetSupervision,
  statusJson,
} from './instance-record.js';
import { refusalOf } from './refusal-map.js';
import { revokedAtStart } from './revoke-op.js';

/** The methods {@link instanceOp} handles. */
export type InstanceVerb =
  | 'workload.start'
  | 'workload.stop'
  | 'workload.unload'
  | 'workload.status'
  | 'workload.logs';

const INSTANCE_VERBS: ReadonlySet<string> = new Set<InstanceVerb>([
  'workload.start',
  'workload.stop',
  'workload.unload',
  'workload.status',
  'workload.logs',
]);

function isInstanceVerb(method: CtlMethod): method is InstanceVerb {
  return INSTANCE_VERBS.has(method);
}

/** Most bytes of log lines one `logs` answer carries (the signed response is at most 256 KiB). */
export const MAX_LOG_BYTES: number = 160 * 1024;

/**
 * `workload.start`, `stop`, `unload`, `status` and `logs` (docs/protocol.md section 14.3): each names an instance this
 * host placed (`unknown_instance` otherwise, or for `status` without an id: the listing). Mutations
 * run under the instance's lock, through the WorkloadHost (gated and chained there); a failure is
 * refused with the adapter's or the gate's code.
 */
export async function instanceOp(state: HostState, req: CtlRequest): Promise<MethodAnswer<InstanceVerb>> {
  const method = req.method;
  if (!isInstanceVerb(method)) {
    throw new Refusal('unknown_method', `${method} is not an instance verb`, { authenticated: true });
  }
  const body = parseRequestBody(method, req.body);
  if (method === 'workload.status' && body.instance_id === undefined) return listing(state, body);
  const id = requireInstanceId(body, method);
  const lookup = (): PlacedInstance => {
    const p = state.instances.get(id);
    if (p !== undefined) return p;
    const departed = state.departed.find(id);
    const why =
      departed === undefined ? 'is not placed on this node' : `was ${departed.reason} at ${departed.at_ms}`;
    throw new Refusal('unknown_instance', `instance ${id} ${why}`, {
      authenticated: true,
      field: 'body.instance_id',
    });
  };
  try {
    switch (method) {
      case 'workload.status': {
        const p = lookup();
        return { instance: instanceView(p, await readStatus(p)) };
      }
      case 'workload.logs':
        return await logs(lookup(), body);
      case 'workload.start':
        return await state.locks.run(id, async () => {
          const p = lookup();
          const revoked = await revokedAtStart(state, p);
          if (revoked !== undefined) throw revoked;
          try {
            await p.host.start(p.handle);
          } catch (err) {
            // Revoked between the check and the gate: torn down by the revocation itself.
            throw (await revokedAtStart(state, p)) ?? err;
          }
          p.desiredRunning = true;
          p.lastDecisionId = req.decision_id ?? p.lastDecisionId;
          // An operator's start is a fresh intention: the lease flag goes, the restart budget is new.
          const wasLeaseStopped = p.leaseStopped;
          p.leaseStopped = false;
          resetSupervision(p);
          await moveLife(state, p, 'running', wasLeaseStopped ? 'started (lease stop cleared)' : 'started', {
            workload: p.name,
            decision_id: req.decision_id ?? null,
            requester: req.requester,
          });
          return { instance_id: id, status: statusJson(await readStatus(p)) };
        });
      case 'workload.stop':
        return await state.locks.run(id, async () => {
          const p = lookup();
          // The intent is saved before the process is stopped: a host killed in between must not
          // start it again at its next start. A stop that fails puts the intent back.
          const before = { desiredRunning: p.desiredRunning, leaseStopped: p.leaseStopped };
          p.desiredRunning = false;
          state.persist();
          let evidence: RunEvidence;
          try {
            evidence = await p.host.stop(p.handle, body.grace_ms ?? DEFAULT_GRACE_MS);
          } catch (err) {
            p.desiredRunning = before.desiredRunning;
            p.leaseStopped = before.leaseStopped;
            state.persist();
            throw err;
          }
          p.leaseStopped = false;
          p.supervision.restartDueAtMs = undefined;
          p.lastDecisionId = req.decision_id ?? p.lastDecisionId;
          await moveLife(state, p, 'stopped', 'stopped', {
            workload: p.name,
            decision_id: req.decision_id ?? null,
            requester: req.requester,
          });
          return {
            instance_id: id,
            evidence: evidenceJson(evidence),
            status: statusJson(await readStatus(p)),
          };
        });
      case 'workload.unload':
        return await state.locks.run(id, async () => {
          const p = lookup();
          await p.host.unload(p.handle);
          state.instances.delete(id);
          state.departed.note({
            instance_id: id,
            reason: 'unloaded',
            at_ms: state.now(),
            decision_id: req.decision_id ?? null,
          });
          state.releasePackage(p.manifestHash);
          await moveLife(state, p, 'unloaded', 'unloaded', {
            workload: p.name,
            decision_id: req.decision_id ?? null,
            requester: req.requester,
          });
          return { instance_id: id, unloaded: true };
        });
    }
  } catch (err) {
    throw refusalOf(err, req.method);
  }
}

async function listing(state: HostState, body: InstanceBody): Promise<HostListingAnswer> {
  const instances = [];
  for (const p of state.instances.values()) instances.push(instanceView(p, await readStatus(p)));
  return {
    node: state.nodeId,
    instances,
    in_flight: state.inFlight.list().map((d) => ({ ...d })),
    ...(body.include_departed === true ? { departed: state.departed.list().map((d) => ({ ...d })) } : {}),
  };
}

async function logs(p: PlacedInstance, body: InstanceBody): Promise<LogsAnswer> {
  const all = await p.host.logs(p.handle, body.lines ?? DEFAULT_LOG_LINES);
  // Keep the newest lines that fit the answer.
  const lines: string[] = [];
  let bytes = 0;
  for (const line of all.toReversed()) {
    bytes += Buffer.byteLength(line, 'utf8') + 8;
    if (bytes > MAX_LOG_BYTES) break;
    lines.push(line);
  }
  lines.reverse();
  return { instance_id: p.instanceId, lines, truncated: lines.length < all.length };
}

/** Most characters of each output stream an answer carries (the tail is kept). */
export const MAX_EVIDENCE_CHARS: number = 32 * 1024;

const tail = (text: string): string =>
  text.length <= MAX_EVIDENCE_CHARS ? text : text.slice(-MAX_EVIDENCE_CHARS);
const cut = (text: string): number =>
  text.length <= MAX_EVIDENCE_CHARS ? 0 : Buffer.byteLength(text.slice(0, -MAX_EVIDENCE_CHARS), 'utf8');

/** Run evidence as it travels (snake case), each output stream cut to its last 32 Ki characters. */
export function evidenceJson(e: RunEvidence): EvidenceView {
  return {
    instance_id: e.instanceId,
    args: [...e.args],
    exit_code: e.exitCode,
    signal: e.signal,
    started_at_ms: e.startedAtMs,
    ended_at_ms: e.endedAtMs,
    killed: e.killed,
    stdout: tail(e.stdout),
    stdout_truncated_bytes: e.stdoutTruncatedBytes + cut(e.stdout),
    stderr: tail(e.stderr),
    stderr_truncated_bytes: e.stderrTruncatedBytes + cut(e.stderr),
    notes: [...e.notes],
  };
}
