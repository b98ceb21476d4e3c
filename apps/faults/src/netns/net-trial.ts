// One seeded trial on a namespace cluster: a few orders placed, then one fault kind (chosen by the
// seed, round robin over the registry) and sometimes a second one composed with it on other hosts,
// held for a seeded time while another order is placed and the process tables are sampled for
// duplicates; then the trial kit's convergence check, and the namespace invariants from outside.
// Every fault must prove it landed inside its window, or the trial counts as not run.
import type { PackageKind } from '../packages.js';
import type { TrialContext, TrialKind } from '../trial-kit.js';
import { DuplicateSampler, netInvariants } from './invariants.js';
import { NET_FAULT_KINDS } from './kinds/index.js';
import type { FaultRecord, NetFaultKind } from './kinds/kind.js';
import { NetCluster } from './net-cluster.js';

/** What a namespace trial recorded beyond the trial kit's result (read by the soak's table). */
export interface NetTrialRecord {
  readonly seed: number;
  readonly faults: readonly FaultRecord[];
  /** Process-table samples taken during the trial, and the duplicates they saw. */
  readonly samples: number;
  readonly duplicatesSeen: readonly string[];
}

/** The command that reruns the namespace trial of `seed` alone. */
export function netRerunHint(seed: number): string {
  return `HEDDLE_NETNS_SEED=${seed} npx vitest run --config vitest.side.config.ts apps/faults/src/netns/netns-trials.side.test.ts`;
}

/** The fault kind a seed leads with: round robin over `kinds` by seed. */
export function leadKind(seed: number, kinds: readonly NetFaultKind[] = NET_FAULT_KINDS): NetFaultKind {
  // cast: the index is taken modulo the (non-empty) registry's length.
  return kinds[((seed % kinds.length) + kinds.length) % kinds.length] as NetFaultKind;
}

/**
 * The trial of `seed` (see the file comment). `records` receives what it recorded; with `lease`
 * (the hosts hold a controller lease) an order seen running twice at any moment fails the trial.
 */
export function netTrial(
  seed: number,
  o: { readonly kinds?: readonly NetFaultKind[]; readonly records?: Map<number, NetTrialRecord> } = {},
): TrialKind {
  const kinds = o.kinds ?? NET_FAULT_KINDS;
  const lead = leadKind(seed, kinds);
  return {
    group: `netns ${lead.name}`,
    title: lead.title,
    waitsOn: 'network faults on real namespaces (issue 23)',
    rerun: netRerunHint,
    // Many hosts back to alive after a partition, on a loaded machine: more than the loopback 20 s.
    resetMs: 45_000,
    async run(ctx: TrialContext): Promise<void> {
      const c = ctx.cluster;
      if (!(c instanceof NetCluster)) throw new Error('a namespace trial needs a NetCluster');
      ctx.convergeMs = 45_000;
      const sampler = new DuplicateSampler(c);
      sampler.start();
      const faults: FaultRecord[] = [];
      try {
        const pkg = (): PackageKind => (ctx.rng.chance(0.75) ? 'native' : 'wasi');
        for (let i = ctx.rng.int(1, 2); i > 0; i--) await ctx.place(pkg());
        sampler.learn(await c.api().instances());
        const hosts = c.hosts.map((h) => h.index);
        const chosen: NetFaultKind[] = [lead];
        if (ctx.rng.chance(0.35)) chosen.push(ctx.rng.pick(kinds.filter((k) => k !== lead)));
        // Disjoint candidates when composed, so each fault's evidence is its own.
        const split =
          chosen.length === 1
            ? [hosts]
            : [hosts.filter((h) => h % 2 === 0), hosts.filter((h) => h % 2 === 1)];
        const holdMs = ctx.rng.int(2_000, 3 * c.deadAfterSecs * 1000 - 6_000);
        ctx.note(`faults: ${chosen.map((k) => k.name).join(' + ')}, hold ${holdMs} ms`);
        const running = chosen.map((k, n) =>
          k.run({
            cluster: c,
            rng: ctx.rng.fork(),
            holdMs: n === 0 ? holdMs : ctx.rng.int(1_500, holdMs),
            candidates: split[n] ?? hosts,
            note: (l) => ctx.note(l),
          }),
        );
        // An order placed while the faults hold (its answer may be lost: it is acknowledged or not).
        await new Promise((r) => setTimeout(r, ctx.rng.int(200, 1_500)));
        await ctx.place(pkg());
        const settled = await Promise.allSettled(running);
        for (const s of settled) {
          if (s.status === 'fulfilled') faults.push(s.value);
          else ctx.problems.push(`a fault failed: ${String(s.reason)}`);
        }
        for (const f of faults) ctx.note(`${f.kind} ${f.landed ? 'landed' : 'MISSED'}: ${f.evidence}`);
        const missed = faults.filter((f) => !f.landed);
        if (faults.length > 0 && missed.length === 0)
          ctx.landed(
            faults.map((f) => `${f.kind} [${f.appliedAt}..${f.liftedAt}]: ${f.evidence}`).join(' | '),
          );
        else if (faults.length > 0) ctx.missed(missed.map((f) => `${f.kind}: ${f.evidence}`).join(' | '));
      } finally {
        sampler.stop();
        await sampler.sample().catch(() => undefined);
        const dup = sampler.violations.map((v) => `+${v.at} ${v.what}`);
        if (c.leaseSecs !== undefined && dup.length > 0)
          ctx.problems.push(
            `with a controller lease of ${c.leaseSecs} s, an order ran twice at a moment: ${dup.slice(0, 5).join('; ')}`,
          );
        else if (dup.length > 0)
          ctx.note(`duplicates seen during the trial (no lease): ${dup.slice(0, 5).join('; ')}`);
        o.records?.set(ctx.seed, { seed: ctx.seed, faults, samples: sampler.samples, duplicatesSeen: dup });
      }
    },
    async afterConverge(ctx) {
      const c = ctx.cluster;
      if (!(c instanceof NetCluster)) return ['a namespace trial needs a NetCluster'];
      // Converged a moment ago; a host that missed its lease under load stops and is restarted in a
      // tick, so the tables may disagree for that long: what still disagrees after 10 s is a problem.
      // (An order running twice at any moment is the sampler's, above.)
      const until = Date.now() + 10_000;
      let problems = await netInvariants(c);
      while (problems.length > 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 500));
        problems = await netInvariants(c);
      }
      return problems;
    },
  };
}
