import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { place, placeAndReserve } from './engine.js';
import { PlacementError } from './errors.js';
import { cap, node } from './fixtures.test-util.js';
import { type PlacementRequest, parsePlacementRequest } from './request.js';
import { checkRequirement } from './requirement.js';
import { PlacementState } from './state.js';
import { type NodeInput, PlacementView, type ViewNode } from './view.js';
import { LIVENESS_VALUES, TRUST_TIERS, tierRank } from './vocabulary.js';

const NOW = 10_000;

const nodeArb = (i: number): fc.Arbitrary<NodeInput> =>
  fc
    .record({
      arch: fc.constantFrom('aarch64', 'x86_64'),
      tier: fc.constantFrom(...TRUST_TIERS),
      liveness: fc.constantFrom('alive', 'alive', 'alive', ...LIVENESS_VALUES),
      memory: fc.integer({ min: 0, max: 2048 }),
      cores: fc.integer({ min: 1, max: 4 }),
      native: fc.boolean(),
      feed: fc.boolean(),
      expired: fc.boolean(),
      load: fc.integer({ min: 0, max: 1000 }),
    })
    .map((o) =>
      node(`n${String(i).padStart(2, '0')}`, {
        ...o,
        expires: o.expired ? NOW : NOW + 1,
        extra: o.feed ? [cap('feed.cam', { exclusive: true })] : [],
      }),
    );

const fleetArb: fc.Arbitrary<NodeInput[]> = fc
  .integer({ min: 0, max: 12 })
  .chain((n) => (n === 0 ? fc.constant([]) : fc.tuple(...Array.from({ length: n }, (_, i) => nodeArb(i)))));

const requestArb: fc.Arbitrary<PlacementRequest> = fc
  .record({
    arch: fc.constantFrom('aarch64', 'x86_64'),
    memory: fc.integer({ min: 0, max: 1024 }),
    cpu: fc.integer({ min: 0, max: 200 }),
    tier: fc.constantFrom(...TRUST_TIERS),
    feed: fc.boolean(),
    exclusive: fc.boolean(),
  })
  .map((o) => ({
    workload: `w-${o.arch}`,
    variants: [
      {
        name: `${o.arch}-native`,
        execution: 'native' as const,
        requirements: [
          { id: `cpu.arch.${o.arch}` },
          { id: 'runtime.native' },
          ...(o.feed ? [{ id: 'feed.cam', exclusive: o.exclusive }] : []),
        ],
      },
    ],
    resources: { memory_mb: o.memory, cpu_pct: o.cpu },
    min_tier: o.tier,
  }));

/** An independent statement of every hard constraint (the engine's contract). */
function eligible(req: PlacementRequest, n: ViewNode, state: PlacementState): boolean {
  const u = state.usage(n.node_id);
  if (state.isNodeRevoked(n.node_id) || n.liveness !== 'alive' || NOW >= n.expires_at_ms) return false;
  if (tierRank(n.tier) < tierRank(req.min_tier ?? 'discovered')) return false;
  const mem = req.resources?.memory_mb ?? 0;
  if (mem > 0 && (u?.memory_mb ?? 0) + mem > Math.max(0, n.memory_mb)) return false;
  if ((u?.cpu_pct ?? 0) + (req.resources?.cpu_pct ?? 0) > n.cpu_capacity) return false;
  return req.variants[0]!.requirements.every((r) => checkRequirement(r, n, u?.claims) === null);
}

describe('engine properties', () => {
  it('a chosen node satisfies every hard constraint; unplaceable exactly when no node passes', () => {
    fc.assert(
      fc.property(fleetArb, requestArb, fc.integer({ min: 1, max: 5 }), (fleet, req, k) => {
        const view = PlacementView.create(fleet);
        const state = new PlacementState();
        const d = place(req, view, state, { now_ms: NOW, max_candidates: k });
        // The second and third use of one request object go through the view's memo: same decision.
        place(req, view, state, { now_ms: NOW, max_candidates: k });
        expect(place(req, view, state, { now_ms: NOW, max_candidates: k })).toEqual(d);
        const any = view.nodes.some((n) => eligible(req, n, state));
        expect(d.outcome === 'unplaceable').toBe(!any);
        if (d.outcome === 'placed') expect(eligible(req, view.get(d.node_id)!, state)).toBe(true);
        if (d.outcome === 'unplaceable')
          expect(d.rejected.map((r) => r.node_id)).toEqual(view.nodes.map((n) => n.node_id));
        // Unbounded scoring chooses the best of all eligible nodes: never worse than the sampled choice.
        const all = place(req, view, state, { now_ms: NOW, max_candidates: Number.POSITIVE_INFINITY });
        if (d.outcome === 'placed' && all.outcome === 'placed')
          expect(all.score).toBeGreaterThanOrEqual(d.score);
      }),
      { numRuns: 300 },
    );
  });

  it('reservations never overcommit', () => {
    fc.assert(
      fc.property(fleetArb, fc.array(requestArb, { minLength: 1, maxLength: 40 }), (fleet, reqs) => {
        const view = PlacementView.create(fleet);
        const state = new PlacementState();
        for (const req of [...reqs, ...reqs]) {
          const { decision } = placeAndReserve(req, view, state, { now_ms: NOW, max_candidates: 3 });
          if (decision.outcome === 'placed') expect(view.get(decision.node_id)).toBeDefined();
        }
        for (const n of view.nodes) {
          const rs = [...state.reservations()].filter((r) => r.node_id === n.node_id);
          const mem = rs.reduce((s, r) => s + (r.memory_mb ?? 0), 0);
          const cpu = rs.reduce((s, r) => s + (r.cpu_pct ?? 0), 0);
          if (mem > 0) expect(mem).toBeLessThanOrEqual(n.memory_mb);
          expect(cpu).toBeLessThanOrEqual(n.cpu_capacity);
          const claims = rs.flatMap((r) => r.claims ?? []);
          expect(new Set(claims).size).toBe(claims.length);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses junk requests with a PlacementError naming a field', () => {
    fc.assert(
      fc.property(fc.anything(), (junk) => {
        try {
          parsePlacementRequest(junk);
        } catch (e) {
          expect(e).toBeInstanceOf(PlacementError);
          expect((e as PlacementError).code).toBe('invalid_request');
          expect(typeof (e as PlacementError).field).toBe('string');
        }
      }),
    );
    expect(() => parsePlacementRequest({ workload: 'w', variants: [] })).toThrow(/variants/);
    expect(() =>
      parsePlacementRequest({
        workload: 'w',
        variants: [{ name: 'v', execution: 'fast', requirements: [] }],
      }),
    ).toThrow(/variants\[0\]\.execution/);
  });
});
