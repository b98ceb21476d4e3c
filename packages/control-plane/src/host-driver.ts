import { hostViewNode } from './engine-view.js';
import { callHostVerb } from './instance-verbs.js';
import { hostListing } from './lifecycle-tick.js';
import { HOST_NODE_KIND, type NodeDriver } from './node-driver.js';
import { attempt } from './place-attempt.js';
import { pushTo } from './revocation-push.js';
import { settleOnHost } from './settle.js';

/**
 * The driver of `heddle-host` nodes (kind `host`), built into every control plane: each method is
 * one of the signed wire protocol's calls (docs/protocol.md), made by the functions beside it: the
 * engine sees the host's verified facts without the routes it does not advertise; `refresh` is a
 * signed `describe` (the learned key required); a package is placed with `workload.place` (the
 * package served over the same connection, a lost answer reconciled with `status`); verbs are the
 * `workload.*` instance methods; `status` with `include_departed` is its listing; revocation lists go
 * out with `workload.revoke`. Hosts are added with `ControlPlane.addNode` (a signed describe).
 */
export const hostDriver: NodeDriver = Object.freeze({
  kind: HOST_NODE_KIND,
  viewNode: hostViewNode,
  refresh: (ctx, t) => ctx.book.refresh(t.node_id),
  verb: (ctx, t, _p, method, body, decisionId) => callHostVerb(ctx, t, method, body, decisionId),
  placePackage: (ctx, a) =>
    attempt(ctx, a.verified, a.order, a.decisionId, a.nodeId, a.variant, a.emulated, a.hooks, a.extras),
  settle: settleOnHost,
  listInstances: hostListing,
  pushRevocations: pushTo,
} satisfies NodeDriver);
