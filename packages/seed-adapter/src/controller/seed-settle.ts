import {
  chainChange,
  type OrderRecord,
  PLANE_CHAIN_SOURCE,
  type PlaneContext,
  type SettleOutcome,
  stageNew,
  type TargetRecord,
  type UnsettledRecord,
} from '@heddle/control-plane/driver';
import type { InstanceHandle } from '@heddle/runtime';
import { SEED_RUNTIME_ID } from '../seed-admission.js';
import { seedPinWorkload } from '../seed-pins.js';
import { seedInstanceId, seedPlacement } from './place-seed.js';
import { type SeedHosts, seedClient, seedPinOf } from './seed-nodes.js';

/**
 * How long after an unsettled Seed install its cog may still appear (the client's install timeout,
 * 180 s, and a margin): a Seed that does not list the cog by then never installed it.
 */
export const SEED_INSTALL_WINDOW_MS = 200_000;

/**
 * Settles an unsettled place on a Seed (an install whose answer was lost, or one that could not be
 * undone) by reading the Seed's installed list, as a host's is settled by its status (docs/lifecycle.md):
 *
 * - the cog is there at the pinned version: it is adopted, started or stopped as the order asked,
 *   and recorded as a placement (chained, `settled`): visible to `ps`, `node ls`. Within
 *   {@link SEED_INSTALL_WINDOW_MS} of the attempt this controller installed it (variant
 *   `store-pin-installed`: unload uninstalls it); later it may be anyone's (variant `store-pin`:
 *   unload leaves it installed);
 * - it is there at another version within {@link SEED_INSTALL_WINDOW_MS} of the attempt: the install
 *   put what the store had then; adopted as a stranded install and unloaded, which uninstalls it
 *   (`nothing`: the order may be placed again). Later than that (the Seed could not be read for a
 *   while) the list does not say whose install it is: it is left alone (`nothing`, chained with
 *   `left: <id>@<version>`);
 * - it is not there: `nothing` once {@link SEED_INSTALL_WINDOW_MS} has passed since the attempt,
 *   else still pending;
 * - the Seed cannot be read or refuses: still pending, the reason kept.
 */
export async function settleSeed(
  ctx: PlaneContext,
  hosts: SeedHosts,
  u: UnsettledRecord,
  target: TargetRecord,
  order: OrderRecord,
): Promise<SettleOutcome> {
  const pin = order.store_pin;
  const pending = (why: string): SettleOutcome => {
    ctx.store.putUnsettled({ ...u, attempts: u.attempts + 1, last_error: why.slice(0, 512) });
    return 'pending';
  };
  if (pin === undefined || pin === null) return pending('the order has no store pin');
  const workload = seedPinWorkload(seedPinOf(pin));
  // Past the install window the Seed's list no longer says whose install a listed cog is (an operator
  // may have installed it meanwhile): it is never taken as this controller's to uninstall.
  const pastWindow = ctx.now() >= u.since_ms + SEED_INSTALL_WINDOW_MS;
  const handle: InstanceHandle = {
    instanceId: u.expected_instance_id ?? seedInstanceId(workload, order, target.node_id),
    runtime: SEED_RUNTIME_ID,
    workloadId: pin.id,
    version: pin.version,
    storeInstalled: !pastWindow,
  };
  let there: { version: string } | undefined;
  try {
    there = (await seedClient(target).installed()).find((c) => c.id === pin.id);
  } catch (err) {
    return pending(`the Seed cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const settled = async (outcome: string, extra: Record<string, string> = {}): Promise<void> => {
    await ctx.chain.append(PLANE_CHAIN_SOURCE, 'workload.place', {
      phase: 'settled',
      decision_id: u.decision_id,
      node_id: u.node_id,
      outcome,
      ...extra,
    });
  };
  if (there === undefined) {
    if (!pastWindow) {
      return pending(`${pin.id} is not on the Seed yet; it may still be installing`);
    }
    ctx.store.removeUnsettled(u.decision_id);
    await settled('nothing');
    return 'nothing';
  }
  if (there.version !== pin.version && pastWindow) {
    ctx.store.removeUnsettled(u.decision_id);
    await settled('nothing', { left: `${pin.id}@${there.version}` });
    return 'nothing';
  }
  try {
    const host = await hosts.hostFor(ctx, target, pin);
    await host.adopt(handle, workload);
    if (there.version !== pin.version) {
      await host.unload(handle); // a stranded install of this controller's: removed
      ctx.store.removeUnsettled(u.decision_id);
      await settled('nothing', { undone: `${pin.id}@${there.version}` });
      return 'nothing';
    }
    if (order.start) await host.start(handle);
    else await host.stop(handle, 5_000);
  } catch (err) {
    return pending(`settling on the Seed failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  ctx.book.contact(target.node_id);
  const placement = seedPlacement(ctx, order, u.decision_id, target.node_id, handle, workload, order.start);
  const staged = ctx.store.transaction(() => {
    const change = stageNew(ctx, placement, 'placed');
    ctx.store.removeUnsettled(u.decision_id);
    return change;
  });
  await chainChange(ctx, staged, { why: 'settled' });
  await settled('placed', { instance_id: placement.instance_id });
  return 'placed';
}
