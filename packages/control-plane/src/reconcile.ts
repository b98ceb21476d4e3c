import { CallFailure, type InstanceView, isListing } from '@heddle/protocol';
import type { PlaneContext } from './plane-context.js';
import type { TargetRecord } from './state-store.js';

/** What a node says became of a decision whose answer was lost. */
export type Settlement =
  | { readonly kind: 'placed'; readonly instance: InstanceView }
  | { readonly kind: 'nothing' }
  | { readonly kind: 'unknown'; readonly reason: string };

/**
 * Reconciles an indeterminate place with its node (docs/protocol.md, section 11): asks `status` (every instance, the
 * decisions in flight) until the node says what became of `decisionId`: an instance whose
 * `decision_id` is it (placed), the decision still in flight (ask again), or neither (nothing was
 * done: safe to try elsewhere, but only once the request has expired by the allowed clock skew, so it
 * can no longer be executed). When that cannot be established within `timeoutMs`, the answer is
 * `unknown` and the decision stays unsettled.
 */
export async function reconcilePlace(
  ctx: PlaneContext,
  target: TargetRecord,
  decisionId: string,
  requestExpiresAtMs: number,
  timeoutMs: number = ctx.config.reconcileTimeoutMs,
): Promise<Settlement> {
  // "Nothing" is final only when the original request can no longer be executed: past its expiry by
  // the clock skew a host allows. Before that it may still arrive (held back, or delayed), so the
  // decision stays open rather than being tried elsewhere.
  const finalAfter = requestExpiresAtMs + ctx.config.clockSkewMs;
  const until = ctx.now() + timeoutMs;
  let reason = 'not asked yet';
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      const r = await ctx.caller.call({
        url: target.url,
        target: target.node_id,
        method: 'workload.status',
        body: {},
        expectedKey: target.public_key,
        timeoutMs: Math.min(ctx.config.callTimeoutMs, Math.max(1000, until - ctx.now())),
      });
      ctx.book.contact(target.node_id);
      const status = r.result;
      if (!isListing(status)) throw new Error('workload.status without instance_id answered one instance');
      const mine = status.instances.find(
        (i) => i.decision_id === decisionId || i.last_decision_id === decisionId,
      );
      if (mine !== undefined) return { kind: 'placed', instance: mine };
      if (status.in_flight.some((d) => d.decision_id === decisionId)) {
        reason = `decision ${decisionId} still in flight on ${target.node_id}`;
      } else if (ctx.now() > finalAfter) {
        return { kind: 'nothing' };
      } else {
        reason = `${target.node_id} has not acted on decision ${decisionId}, but its request could still arrive until ${new Date(finalAfter).toISOString()}`;
      }
    } catch (err) {
      reason = err instanceof CallFailure ? err.message : String(err);
    }
    if (ctx.now() + wait > until) return { kind: 'unknown', reason };
    await new Promise((r) => setTimeout(r, wait));
  }
}
