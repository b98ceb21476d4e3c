import { NODE_TIERS } from '@heddle/model';
import { z } from 'zod';
import { observeClock } from './clock-alerts.js';
import { hostViewNode } from './engine-view.js';
import { PlaneError } from './errors.js';
import { callHostVerb } from './instance-verbs.js';
import { hostListing } from './lifecycle-tick.js';
import type { AddNodeOptions } from './node-book.js';
import { HOST_NODE_KIND, type NodeDriver } from './node-driver.js';
import { attempt } from './place-attempt.js';
import { pushTo } from './revocation-push.js';
import { settleOnHost } from './settle.js';

/** Schema of {@link AddNodeOptions} (the host driver's `add` options). */
export const AddNodeOptionsSchema: z.ZodType<AddNodeOptions> = z.strictObject({
  tier: z.enum(NODE_TIERS),
  key: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters')
    .optional(),
});

/** `options` as {@link AddNodeOptions}; `invalid_input` naming the field otherwise. */
function parseAddNodeOptions(options: unknown): AddNodeOptions {
  const r = AddNodeOptionsSchema.safeParse(options);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path =
    issue === undefined
      ? []
      : issue.code === 'unrecognized_keys'
        ? [...issue.path, issue.keys[0] ?? '']
        : issue.path;
  const field = path.length === 0 ? '$' : path.join('.');
  throw new PlaneError('invalid_input', `${field}: ${issue?.message ?? 'invalid'}`, { field });
}

/**
 * The driver of `heddle-host` nodes (kind `host`), built into every control plane: each method is
 * one of the signed wire protocol's calls (docs/protocol.md), made by the functions beside it: the
 * engine sees the host's verified facts without the routes it does not advertise; `refresh` is a
 * signed `describe` (the learned key required); a package is placed with `workload.place` (the
 * package served over the same connection, a lost answer reconciled with `status`); verbs are the
 * `workload.*` instance methods; `status` with `include_departed` is its listing; revocation lists go
 * out with `workload.revoke`. A host is added with a signed describe (`ControlPlane.addNode`, or
 * `addNodeOf('host', url, {tier, key?})`). Every describe measures the host's clock offset, which
 * opens or closes its `clock_skew` alert (`observeClock`).
 */
export const hostDriver: NodeDriver = Object.freeze({
  kind: HOST_NODE_KIND,
  add: async (ctx, url, options) => {
    const t = await ctx.book.add(url, parseAddNodeOptions(options));
    await observeClock(ctx, t.node_id);
    return t;
  },
  viewNode: hostViewNode,
  refresh: async (ctx, t) => {
    const next = await ctx.book.refresh(t.node_id);
    await observeClock(ctx, t.node_id);
    return next;
  },
  verb: (ctx, t, _p, method, body, decisionId) => callHostVerb(ctx, t, method, body, decisionId),
  placePackage: (ctx, a) =>
    attempt(ctx, a.verified, a.order, a.decisionId, a.nodeId, a.variant, a.emulated, a.hooks, a.extras),
  settle: settleOnHost,
  listInstances: hostListing,
  pushRevocations: pushTo,
} satisfies NodeDriver);
