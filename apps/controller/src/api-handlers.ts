import { isAbsolute } from 'node:path';
import type { Chain, ChainEvent } from '@heddle/chain';
import {
  type ControlPlane,
  type JobSpec,
  type PlaceResult,
  PlaneError,
  parseJobSpec,
  type RevocationPushReport,
} from '@heddle/control-plane';
import type { LeaderStatus } from '@heddle/control-plane/leader';
import { isGone } from '@heddle/model';
import {
  ApiFailure,
  type OperatorHandlers,
  type OperatorStore,
  operatorHandlers,
} from '@heddle/operator-api';
import type { RevocationListFile } from '@heddle/package';
import { addSeed } from '@heddle/seed-adapter/controller';

/** What the daemon adds to the plane for the operator API. */
export interface PlaneHandlerOptions {
  /**
   * Applies a signed revocation list (the daemon keeps its own copy in step, then distributes it);
   * without it, `POST /v1/revocations` only distributes (`plane.pushRevocations`).
   */
  readonly applyRevocations?: (list: RevocationListFile) => Promise<RevocationPushReport>;
  /** Wraps each operator place (the daemon's metrics time it); default: runs it as is. */
  readonly aroundPlace?: (run: () => Promise<PlaceResult>) => Promise<PlaceResult>;
  /**
   * The controller's operators (`<home>/operators.json`), served by `/v1/operators`; without it those
   * routes answer `not_found` (`/v1/whoami` still answers).
   */
  readonly operators?: OperatorStore;
  /** The controller's audit chain, read by the chain and decision routes (without it they answer `not_found`). */
  readonly chain?: Chain;
  /** Who leads, with several controllers (`GET /v1/health` answers it); undefined: this one runs alone. */
  readonly leadership?: () => LeaderStatus | undefined;
}

/** The chain, or `not_found` for a server that was not given one. */
function chainOf(options: PlaneHandlerOptions): Chain {
  if (options.chain === undefined) throw new ApiFailure('not_found', 'this server does not serve its chain');
  return options.chain;
}

/** The event `id` names (a seq or a 64-hex event hash); `unknown_event` otherwise. */
function eventOf(chain: Chain, id: string): ChainEvent {
  const event = /^\d{1,16}$/.test(id)
    ? chain.get(Number(id))
    : /^[0-9a-f]{64}$/.test(id)
      ? chain.getByHash(id)
      : undefined;
  if (event === undefined) {
    throw new ApiFailure(
      'unknown_event',
      `no chain event ${id} (a seq below ${chain.size}, or an event hash)`,
      {
        field: 'event',
      },
    );
  }
  return event;
}

/**
 * A job file from a request body: parsed (`job_invalid` naming the field), its `package` an absolute
 * path on the controller machine (the CLI resolves it against the job file's directory).
 */
function apiJobSpec(body: unknown): JobSpec {
  const spec = parseJobSpec(body);
  if (spec.package !== undefined && !isAbsolute(spec.package)) {
    throw new PlaneError(
      'job_invalid',
      'job file package: expected an absolute path on the controller machine (heddle job resolves it against the job file)',
      { field: 'package' },
    );
  }
  return spec;
}

/**
 * The operator API's routes bound to a control plane: each handler is given a request the server
 * adapter already validated with the route's schemas, and answers the route's answer type (checked by
 * the compiler against the route table of `@heddle/operator-api`).
 */
export function planeHandlers(plane: ControlPlane, options: PlaneHandlerOptions = {}): OperatorHandlers {
  return {
    health: () => {
      const l = options.leadership?.();
      return {
        controller: plane.nodeId,
        nodes: plane.nodes().length,
        instances: plane.instances().filter((p) => !isGone(p.state)).length,
        unsettled: plane.unsettled().length,
        leadership:
          l === undefined
            ? null
            : {
                leading: l.leading,
                leader: l.leader === '' ? null : l.leader,
                epoch: l.epoch,
                expires_at_ms: l.expiresAtMs,
                last_error: l.lastError,
              },
      };
    },
    listNodes: () => ({ nodes: plane.nodes() }),
    addNode: async ({ body }) => ({
      node: await plane.addNode(body.url, {
        tier: body.tier,
        ...(body.key === undefined ? {} : { key: body.key }),
      }),
    }),
    addSeed: async ({ body }) => ({
      node: await addSeed(plane, body.url, {
        tier: body.tier,
        spki: body.spki,
        tokenFile: body.token_file,
        ...(body.allow_plain_http === undefined ? {} : { allowPlainHttp: body.allow_plain_http }),
      }),
    }),
    refreshNodes: async () => ({ nodes: await plane.refreshNodes() }),
    getNode: ({ id }) => ({ node: plane.node(id) }),
    removeNode: async ({ id, query }) => ({ node: await plane.removeNode(id, query.force) }),
    pinNode: async ({ id, body }) => ({ node: await plane.pinNode(id, body.key, body.tier) }),
    cordonNode: async ({ id }) => ({ node: await plane.cordonNode(id) }),
    uncordonNode: async ({ id }) => ({ node: await plane.uncordonNode(id) }),
    drainNode: ({ id }) => plane.drainNode(id),
    labelNode: async ({ id, body }) => ({ node: await plane.labelNode(id, body) }),
    place: ({ body, onProgress, requestId }) => {
      // The request id goes on to each host that reads it (its log names the operator's request).
      const run = () =>
        plane.place(body, onProgress === undefined ? { requestId } : { requestId, onProgress });
      return options.aroundPlace === undefined ? run() : options.aroundPlace(run);
    },
    listInstances: () => ({ instances: plane.instances() }),
    getInstance: ({ id }) => plane.status(id),
    logs: ({ id, query }) => plane.logs(id, query.lines),
    start: async ({ id }) => ({ placement: await plane.start(id) }),
    stop: ({ id, body }) => plane.stop(id, body.grace_ms),
    unload: async ({ id }) => ({ placement: await plane.unload(id) }),
    listAlerts: ({ query }) => ({ alerts: plane.alerts({ unacknowledged: query.unacknowledged }) }),
    ackAlert: async ({ id }) => ({ alert: await plane.ackAlert(id) }),
    revocations: () => plane.revocationStatus(),
    pushRevocations: ({ body }) =>
      options.applyRevocations === undefined ? plane.pushRevocations(body) : options.applyRevocations(body),
    unsettled: () => ({ unsettled: plane.unsettled() }),
    settle: () => plane.settle(),
    chainHead: () => {
      const chain = chainOf(options);
      const v = chain.verify();
      return {
        size: chain.size,
        head: chain.head,
        root: chain.root(),
        verify: {
          ok: v.ok,
          size: v.size,
          failure:
            v.failure === null
              ? null
              : { seq: v.failure.seq, reason: v.failure.reason, message: v.failure.message },
        },
      };
    },
    chainEvents: ({ query }) => {
      const chain = chainOf(options);
      const to = Math.min(query.before ?? chain.size, chain.size);
      return { events: chain.range(Math.max(0, to - query.limit), to).reverse() };
    },
    chainEvent: ({ id }) => {
      const chain = chainOf(options);
      const event = eventOf(chain, id);
      return { event, proof: chain.inclusionProof(event.seq) };
    },
    decision: ({ id }) => {
      const chain = chainOf(options);
      const event = eventOf(chain, id);
      const payload = event.payload;
      const phase =
        typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload.phase : null;
      if (event.kind !== 'workload.place' || phase !== 'decision') {
        throw new ApiFailure('unknown_event', `chain event ${id} is not a place decision`, {
          field: 'decision',
        });
      }
      return { event, explanation: plane.explanation(event.hash) ?? null };
    },
    listApprovals: async ({ query }) => ({ approvals: await plane.approvals(query.state) }),
    getApproval: async ({ id }) => ({ approval: await plane.approval(id) }),
    approve: async ({ id, body, actor }) => ({ approval: await plane.approve(id, actor.name, body.note) }),
    reject: async ({ id, body, actor }) => ({ approval: await plane.reject(id, actor.name, body.note) }),
    listJobs: () => ({ jobs: plane.jobs() }),
    planJob: ({ body }) => plane.planJob(apiJobSpec(body)),
    runJob: ({ body }) => plane.runJob(apiJobSpec(body)),
    getJob: ({ id }) => ({ job: plane.job(id) }),
    jobHistory: ({ id }) => ({ versions: plane.jobHistory(id) }),
    revertJob: ({ id, body }) => plane.revertJob(id, body.version),
    stopJob: async ({ id }) => ({ job: await plane.stopJob(id) }),
    ...operatorHandlers(options.operators),
  };
}
