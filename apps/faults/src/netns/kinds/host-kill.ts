// The loopback suite's crash fault on the namespace cluster, to compose with the network faults: a
// host daemon killed with SIGKILL (its native workloads keep running, as on a real machine) and
// started again on the same home after the hold. Landed when the daemon's process was gone from its
// namespace's process table (`ip netns pids`) inside the window and is back after.
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';

/** kill -9 of one host daemon for the hold, then a restart on the same home. */
export const hostKill: NetFaultKind = {
  name: 'host-kill',
  title: 'kill -9 of a host daemon, restarted after the hold',
  async run(ctx: FaultContext): Promise<FaultRecord> {
    const c = ctx.cluster;
    const t = ctx.rng.pick(ctx.candidates);
    const pid = c.hostAt(t).daemon?.proc.pid;
    await c.killHost(t);
    const appliedAt = Date.now();
    ctx.note(`host-kill: host ${t} (pid ${pid}) for ${ctx.holdMs} ms`);
    let goneInside = false;
    let liftedAt = appliedAt;
    try {
      await new Promise((r) => setTimeout(r, Math.max(0, ctx.holdMs - 200)));
      goneInside = pid !== undefined && !(await c.fabric.pids(t)).includes(pid);
    } finally {
      liftedAt = Date.now();
      await c.startHost(t);
    }
    const back = c.hostAt(t).daemon?.proc.pid;
    const backInside = back !== undefined && (await c.fabric.pids(t)).includes(back);
    return {
      kind: 'host-kill',
      targets: [t],
      params: `${ctx.holdMs} ms`,
      appliedAt,
      liftedAt,
      landed: goneInside && backInside,
      evidence: `host ${t}: pid ${pid} ${goneInside ? 'absent from' : 'STILL IN'} its namespace near the end of the window, new pid ${back} ${backInside ? 'in it' : 'NOT in it'} after`,
    };
  },
};
