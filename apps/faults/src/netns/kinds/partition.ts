// Silent partitions of one host. `partition-both`: its cable pulled (the root-side veth set down):
// nothing passes either way, no reset, as behind a dead switch. `partition-in`: packets from the
// controller are dropped on arrival at the host (requests vanish); `partition-out`: packets from the
// host are dropped on arrival at the controller (the host hears and acts, its answers vanish).
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';
import { holdAndProbe, partitionVerdict } from './probe.js';

type Direction = 'both' | 'in' | 'out';

function partition(direction: Direction): NetFaultKind {
  const title = {
    both: 'silent partition of one host, both ways (cable pulled)',
    in: 'one-way partition: controller to host dropped',
    out: 'one-way partition: host to controller dropped',
  }[direction];
  return {
    name: `partition-${direction}`,
    title,
    async run(ctx: FaultContext): Promise<FaultRecord> {
      const c = ctx.cluster;
      const t = ctx.rng.pick(ctx.candidates);
      const apply = async (): Promise<void> => {
        if (direction === 'both') await c.fabric.linkDown(t);
        else if (direction === 'in') await c.fabric.drop(t, ['controller']);
        else await c.fabric.drop('controller', [t]);
      };
      const lift = async (): Promise<void> => {
        if (direction === 'both') await c.fabric.linkUp(t);
        else if (direction === 'in') await c.fabric.undrop(t, ['controller']);
        else await c.fabric.undrop('controller', [t]);
      };
      await apply();
      const appliedAt = Date.now();
      ctx.note(`${this.name}: host ${t} for ${ctx.holdMs} ms`);
      let liftedAt = appliedAt;
      let seen: Awaited<ReturnType<typeof holdAndProbe>> = { probes: [], unreachableSince: new Map() };
      try {
        seen = await holdAndProbe(c, [t], ctx.holdMs);
      } finally {
        liftedAt = Date.now();
        await lift();
      }
      const v = partitionVerdict([t], seen, appliedAt, liftedAt);
      return { kind: this.name, targets: [t], params: `${ctx.holdMs} ms`, appliedAt, liftedAt, ...v };
    },
  };
}

/** Both ways: the host's cable pulled. */
export const partitionBoth: NetFaultKind = partition('both');
/** One way: what the controller sends the host is lost. */
export const partitionIn: NetFaultKind = partition('in');
/** One way: what the host sends the controller is lost. */
export const partitionOut: NetFaultKind = partition('out');
