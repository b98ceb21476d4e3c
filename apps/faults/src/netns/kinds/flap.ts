// A flapping link: one host's cable pulled and plugged in again at seeded intervals (each down and
// each up 200 to 1,500 ms) for the hold. Landed when a probe from the controller's namespace saw
// silence inside a down interval and an answer inside an up interval.
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';
import { probeHost, silent, type TimedProbe } from './probe.js';

/** One host's link flapping. */
export const flap: NetFaultKind = {
  name: 'flap',
  title: 'a flapping link (seeded up/down intervals)',
  async run(ctx: FaultContext): Promise<FaultRecord> {
    const c = ctx.cluster;
    const t = ctx.rng.pick(ctx.candidates);
    const intervals: { down: boolean; ms: number }[] = [];
    for (let sum = 0, down = true; sum < ctx.holdMs; down = !down) {
      const ms = Math.min(ctx.rng.int(200, 1_500), ctx.holdMs - sum);
      intervals.push({ down, ms });
      sum += ms;
    }
    ctx.note(`flap: host ${t}: ${intervals.map((i) => `${i.down ? 'down' : 'up'} ${i.ms}`).join(', ')}`);
    const inDown: TimedProbe[] = [];
    const inUp: TimedProbe[] = [];
    const appliedAt = Date.now();
    let liftedAt = appliedAt;
    let down = false;
    try {
      for (const i of intervals) {
        if (i.down && !down) await c.fabric.linkDown(t);
        if (!i.down && down) await c.fabric.linkUp(t);
        down = i.down;
        const end = Date.now() + i.ms;
        // One probe per interval that fits one (a connect from before a change is not counted).
        if (i.ms >= 250) {
          const p = await probeHost(c, t, i.ms - 100);
          if (Date.now() <= end) (i.down ? inDown : inUp).push(p);
        }
        const wait = end - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    } finally {
      liftedAt = Date.now();
      if (down) await c.fabric.linkUp(t);
    }
    const quiet = inDown.filter(silent).length;
    const heard = inUp.filter((p) => p.probe.result === 'connected').length;
    const landed = quiet > 0 && quiet === inDown.length && (inUp.length === 0 || heard > 0);
    return {
      kind: 'flap',
      targets: [t],
      params: `${intervals.length} intervals over ${ctx.holdMs} ms`,
      appliedAt,
      liftedAt,
      landed,
      evidence: `host ${t}: ${quiet} of ${inDown.length} probes in down intervals silent, ${heard} of ${inUp.length} in up intervals answered`,
    };
  },
};
