// The controller partitioned from half the fleet (both ways, silently): packets between the
// controller and each of those hosts are dropped on arrival on both sides; the other half and the
// test process (on the bridge's own address) still reach everyone.
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';
import { holdAndProbe, partitionVerdict } from './probe.js';

/** The controller cut off from half the hosts (rounded down, at least one). */
export const halfFleet: NetFaultKind = {
  name: 'half-fleet',
  title: 'the controller partitioned from half the fleet',
  async run(ctx: FaultContext): Promise<FaultRecord> {
    const c = ctx.cluster;
    const pool = [...ctx.candidates];
    const n = Math.max(1, Math.floor(c.hosts.length / 2));
    const targets: number[] = [];
    while (targets.length < n && pool.length > 0)
      targets.push(...pool.splice(ctx.rng.int(0, pool.length - 1), 1));
    targets.sort((a, b) => a - b);
    await c.fabric.drop('controller', targets);
    for (const t of targets) await c.fabric.drop(t, ['controller']);
    const appliedAt = Date.now();
    ctx.note(`half-fleet: hosts ${targets.join(', ')} for ${ctx.holdMs} ms`);
    let liftedAt = appliedAt;
    let seen: Awaited<ReturnType<typeof holdAndProbe>> = { probes: [], unreachableSince: new Map() };
    try {
      seen = await holdAndProbe(c, targets, ctx.holdMs);
    } finally {
      liftedAt = Date.now();
      for (const t of targets) await c.fabric.undrop(t, ['controller']);
      await c.fabric.undrop('controller', targets);
    }
    const v = partitionVerdict(targets, seen, appliedAt, liftedAt);
    return {
      kind: 'half-fleet',
      targets,
      params: `${targets.length} of ${c.hosts.length} hosts, ${ctx.holdMs} ms`,
      appliedAt,
      liftedAt,
      ...v,
    };
  },
};
