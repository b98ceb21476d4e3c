// A flapping link: one host's cable pulled and plugged in again at seeded intervals (the first down
// interval 1,000 to 2,000 ms, every other one 200 to 1,500 ms) for the hold. Each interval's actual
// start and end are recorded (after the command that changes the link returned); a probe is started
// at the beginning of each interval of 250 ms or more without holding up the schedule, and judged by
// when the relay actually sent it (its timeout stays under TCP's first SYN retransmission, 1 s, so a
// probe sent while the cable was out cannot be answered by the link coming back). Landed when every
// probe sent inside a down interval saw silence (at least one), and a probe sent inside an up
// interval was answered when any was sent.
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';
import { probeHost, silent, type TimedProbe } from './probe.js';

/** One host's link flapping. */
export const flap: NetFaultKind = {
  name: 'flap',
  title: 'a flapping link (seeded up/down intervals)',
  async run(ctx: FaultContext): Promise<FaultRecord> {
    const c = ctx.cluster;
    const t = ctx.rng.pick(ctx.candidates);
    const plan: { down: boolean; ms: number }[] = [];
    for (let sum = 0, down = true; sum < ctx.holdMs; down = !down) {
      const ms = Math.min(sum === 0 ? ctx.rng.int(1_000, 2_000) : ctx.rng.int(200, 1_500), ctx.holdMs - sum);
      plan.push({ down, ms });
      sum += ms;
    }
    ctx.note(`flap: host ${t}: ${plan.map((i) => `${i.down ? 'down' : 'up'} ${i.ms}`).join(', ')}`);
    const done: { down: boolean; from: number; to: number }[] = [];
    const probes: Promise<TimedProbe>[] = [];
    let down = false;
    let appliedAt = 0;
    let liftedAt = 0;
    try {
      for (const i of plan) {
        if (i.down && !down) await c.fabric.linkDown(t);
        if (!i.down && down) await c.fabric.linkUp(t);
        down = i.down;
        const from = Date.now();
        if (appliedAt === 0) appliedAt = from;
        const end = from + i.ms;
        if (i.ms >= 250) probes.push(probeHost(c, t, Math.min(900, i.ms - 100)));
        const wait = end - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        // The interval ends when the next change is made (the last one: when the link is restored).
        done.push({ down: i.down, from, to: Date.now() });
      }
    } finally {
      liftedAt = Date.now();
      if (down) await c.fabric.linkUp(t);
    }
    const seen = await Promise.all(probes);
    const within = (p: TimedProbe, d: boolean): boolean =>
      done.some((x) => x.down === d && p.at >= x.from && p.at <= x.to);
    const inDown = seen.filter((p) => within(p, true));
    const inUp = seen.filter((p) => within(p, false));
    const quiet = inDown.filter(silent).length;
    const heard = inUp.filter((p) => p.probe.result === 'connected').length;
    const landed = quiet > 0 && quiet === inDown.length && (inUp.length === 0 || heard > 0);
    return {
      kind: 'flap',
      targets: [t],
      params: `${plan.length} intervals over ${ctx.holdMs} ms`,
      appliedAt,
      liftedAt,
      landed,
      evidence: `host ${t}: ${quiet} of ${inDown.length} probes sent in down intervals silent, ${heard} of ${inUp.length} sent in up intervals answered (${seen.length - inDown.length - inUp.length} sent between intervals, not counted)`,
    };
  },
};
