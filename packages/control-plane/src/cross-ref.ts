import type { JsonObject } from '@heddle/envelope';
import type { PlaneContext } from './plane-context.js';

/**
 * The `refers_to` field of a chained record that acts on a placement whose decision is not in this
 * controller's own chain (another controller of the same database placed it: docs/chain.md,
 * "Several controllers"): `[{controller: null, event: <decision hash>, kind: "workload.place"}]`. `heddle chain verify` with
 * every controller's chain finds the event by its hash and checks it is a placement decision. Empty
 * (`{}`) when the decision is this controller's own (the chain links it already) or unknown.
 */
export function crossRef(ctx: PlaneContext, decisionId: string | undefined): JsonObject {
  if (decisionId === undefined || !/^[0-9a-f]{64}$/.test(decisionId)) return {};
  if (ctx.chain.getByHash(decisionId) !== undefined) return {};
  return { refers_to: [{ controller: null, event: decisionId, kind: 'workload.place' }] };
}
