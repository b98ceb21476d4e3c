// Latency and loss added in user space, on the relay in the controller's namespace through which
// the controller reaches each host (the kernel here has no netem). `latency`: every chunk of the
// chosen hosts' connections delayed (both ways) by a seeded latency plus jitter. `loss`: chunks
// "lost" with a seeded probability, which on TCP means a retransmission stall (the relay holds the
// chunk back, doubling for losses in a row), over a small base latency. Landed when the relay
// impaired traffic of every target inside the window.
import type { RelayMode } from '../relay-main.js';
import type { FaultContext, FaultRecord, NetFaultKind } from './kind.js';

function impair(
  name: 'latency' | 'loss',
  title: string,
  draw: (ctx: FaultContext) => RelayMode,
): NetFaultKind {
  return {
    name,
    title,
    async run(ctx: FaultContext): Promise<FaultRecord> {
      const c = ctx.cluster;
      const pool = [...ctx.candidates];
      const n = ctx.rng.int(1, Math.max(1, Math.min(3, pool.length)));
      const targets: number[] = [];
      while (targets.length < n && pool.length > 0)
        targets.push(...pool.splice(ctx.rng.int(0, pool.length - 1), 1));
      const mode = draw(ctx);
      const before = await Promise.all(targets.map((t) => c.relay.stats(`h${t}`)));
      // In force from the moment the relay gets the command (between this and its answer).
      const appliedAt = Date.now();
      await Promise.all(targets.map((t) => c.relay.mode(`h${t}`, mode)));
      const params = `latency ${mode.latencyMs} ms, jitter ${mode.jitterMs} ms, loss ${mode.loss}, stall ${mode.stallMs} ms`;
      ctx.note(`${name}: hosts ${targets.join(', ')}: ${params} for ${ctx.holdMs} ms`);
      let liftedAt = appliedAt;
      let after: Awaited<ReturnType<typeof c.relay.stats>>[] = [];
      try {
        // The controller's health checks cross the relay about once a second: traffic to impair.
        await new Promise((r) => setTimeout(r, ctx.holdMs));
        after = await Promise.all(targets.map((t) => c.relay.stats(`h${t}`)));
      } finally {
        liftedAt = Date.now();
        for (const t of targets) await c.relay.mode(`h${t}`, { seed: 0 });
      }
      const parts: string[] = [];
      let landed = after.length === targets.length;
      let stalls = 0;
      targets.forEach((t, k) => {
        const a = after[k];
        const b = before[k];
        if (a === undefined || b === undefined) return;
        // Every target's traffic impaired inside the window (delayed chunks: the latency, or loss's
        // base latency); for loss, at least one stall over all targets.
        const delayed = a.delayed - b.delayed;
        stalls += a.stalls - b.stalls;
        const inWindow = a.firstImpairedAt >= appliedAt && a.lastImpairedAt <= liftedAt;
        if (delayed <= 0 || !inWindow) landed = false;
        parts.push(
          `host ${t}: ${delayed} of ${a.chunks - b.chunks} chunk(s) delayed, ${a.stalls - b.stalls} stalled, ${Math.round(a.delayMsTotal - b.delayMsTotal)} ms added, first +${a.firstImpairedAt - appliedAt} ms, last +${a.lastImpairedAt - appliedAt} ms`,
        );
      });
      if (name === 'loss' && stalls === 0) landed = false;
      return { kind: name, targets, params, appliedAt, liftedAt, landed, evidence: parts.join('; ') };
    },
  };
}

/** Latency and jitter on the paths to one to three hosts. */
export const latency: NetFaultKind = impair('latency', 'latency added in user space', (ctx) => ({
  latencyMs: ctx.rng.int(50, 400),
  jitterMs: ctx.rng.int(0, 150),
  loss: 0,
  stallMs: 0,
  seed: ctx.rng.int(1, 1_000_000),
}));

/** Loss (retransmission stalls) on the paths to one to three hosts. */
export const loss: NetFaultKind = impair(
  'loss',
  'loss added in user space (TCP retransmission stalls)',
  (ctx) => ({
    latencyMs: 5,
    jitterMs: 0,
    loss: ctx.rng.int(20, 40) / 100,
    stallMs: ctx.rng.int(100, 300),
    seed: ctx.rng.int(1, 1_000_000),
  }),
);
