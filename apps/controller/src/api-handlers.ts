import type { ControlPlane, PlaceResult, RevocationPushReport } from '@heddle/control-plane';
import { isGone } from '@heddle/model';
import type { OperatorHandlers } from '@heddle/operator-api';
import type { RevocationListFile } from '@heddle/package';
import { addSeed } from '@heddle/seed-adapter/controller';

/**
 * Who approves or rejects through the operator API, as chained: the API's one bearer token is the
 * only identity the API knows of its callers.
 */
export const API_APPROVER = 'operator-api-token';

/** What the daemon adds to the plane for the operator API. */
export interface PlaneHandlerOptions {
  /**
   * Applies a signed revocation list (the daemon keeps its own copy in step, then distributes it);
   * without it, `POST /v1/revocations` only distributes (`plane.pushRevocations`).
   */
  readonly applyRevocations?: (list: RevocationListFile) => Promise<RevocationPushReport>;
  /** Wraps each operator place (the daemon's metrics time it); default: runs it as is. */
  readonly aroundPlace?: (run: () => Promise<PlaceResult>) => Promise<PlaceResult>;
}

/**
 * The operator API's routes bound to a control plane: each handler is given a request the server
 * adapter already validated with the route's schemas, and answers the route's answer type (checked by
 * the compiler against the route table of `@heddle/operator-api`).
 */
export function planeHandlers(plane: ControlPlane, options: PlaneHandlerOptions = {}): OperatorHandlers {
  return {
    health: () => ({
      controller: plane.nodeId,
      nodes: plane.nodes().length,
      instances: plane.instances().filter((p) => !isGone(p.state)).length,
      unsettled: plane.unsettled().length,
    }),
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
    listApprovals: async ({ query }) => ({ approvals: await plane.approvals(query.state) }),
    getApproval: async ({ id }) => ({ approval: await plane.approval(id) }),
    approve: async ({ id, body }) => ({ approval: await plane.approve(id, API_APPROVER, body.note) }),
    reject: async ({ id, body }) => ({ approval: await plane.reject(id, API_APPROVER, body.note) }),
  };
}
