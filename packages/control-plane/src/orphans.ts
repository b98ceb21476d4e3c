import { PlaneError } from './errors.js';
import { sendVerb } from './instance-verbs.js';
import { setState } from './placement-life.js';
import type { PlaneContext } from './plane-context.js';
import type { PlacementRecord } from './state-store.js';

/**
 * Removes an orphan from its node (docs/lifecycle.md): an instance the controller replaced (`rescheduled`) or
 * revoked while its node was away, found there again. It is stopped (a refusal, such as "not
 * running", is no obstacle) and unloaded, each a chained controller decision, then recorded
 * `unloaded`. Throws the plane error of a failed unload (the tick retries with backoff).
 */
export async function unloadOrphan(ctx: PlaneContext, p: PlacementRecord): Promise<PlacementRecord> {
  const why = { why: p.state === 'revoked' ? 'revoked orphan' : 'orphan: replaced while its node was away' };
  try {
    await sendVerb(ctx, p, 'workload.stop', { instance_id: p.instance_id }, why);
  } catch (err) {
    if (!(err instanceof PlaneError) || err.code !== 'refused') throw err;
  }
  try {
    await sendVerb(ctx, p, 'workload.unload', { instance_id: p.instance_id }, why);
  } catch (err) {
    // Already gone from the node (unloaded by someone else meanwhile): nothing left to remove.
    if (!(err instanceof PlaneError && err.code === 'refused' && /unknown_instance/.test(err.message)))
      throw err;
  }
  ctx.reservations.release(p.instance_id);
  return setState(ctx, p.instance_id, 'unloaded', `${why.why}: unloaded`, { desired_running: false });
}
