import { NODE_TIERS } from '@heddle/model';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Capability } from './capability.js';
import type { GovernanceVerdict } from './decision.js';
import { place, placeAndReserve } from './engine.js';
import { PlacementError } from './errors.js';
import { cap, node } from './fixtures.test-util.js';
import { type PlacementRequest, PlacementRequestSchema, parsePlacementRequest } from './request.js';
import type { Predicate, Requirement } from './requirement.js';
import { PlacementState } from './state.js';
import { type NodeInput, PlacementView, type ViewNode } from './view.js';
import { CAPABILITY_STATES, LIVENESS_VALUES, PROVENANCES } from './vocabulary.js';

const NOW = 10_000;

// ---- Generators ---------------------------------------------------------------------------------

const feedArb = (k: number): fc.Arbitrary<Capability> =>
  fc
    .record({
      fps: fc.integer({ min: 0, max: 60 }),
      formats: fc.subarray(['h264', 'mjpeg', 'raw']),
      kind: fc.constantFrom('usb', 'csi'),
      provenance: fc.constantFrom(...PROVENANCES),
      state: fc.constantFrom('available', 'available', ...CAPABILITY_STATES),
      exclusive: fc.boolean(),
    })
    .map((o) =>
      cap(`feed.cam.${k}`, {
        attrs: { fps: o.fps, formats: o.formats, kind: o.kind },
        provenance: o.provenance,
        state: o.state,
        exclusive: o.exclusive,
      }),
    );

const nodeArb = (i: number): fc.Arbitrary<NodeInput> =>
  fc
    .record({
      arch: fc.constantFrom('aarch64', 'x86_64'),
      tier: fc.constantFrom(...NODE_TIERS),
      liveness: fc.constantFrom('alive', 'alive', 'alive', ...LIVENESS_VALUES),
      memory: fc.integer({ min: 0, max: 2048 }),
      cores: fc.integer({ min: 1, max: 4 }),
      native: fc.boolean(),
      feeds: fc
        .integer({ min: 0, max: 2 })
        .chain((n) => fc.tuple(...Array.from({ length: n }, (_, k) => feedArb(k)))),
      container: fc.option(fc.subarray(['aarch64', 'x86_64'], { minLength: 1 })),
      expired: fc.boolean(),
      load: fc.integer({ min: 0, max: 1000 }),
    })
    .map((o) =>
      node(`n${String(i).padStart(2, '0')}`, {
        ...o,
        expires: o.expired ? NOW : NOW + 1,
        extra: [
          ...o.feeds,
          ...(o.container === null
            ? []
            : [
                cap('runtime.container.docker', {
                  attrs: { arches_native: [o.arch], arches_emulated: o.container },
                }),
              ]),
        ],
      }),
    );

const fleetArb: fc.Arbitrary<NodeInput[]> = fc
  .integer({ min: 0, max: 12 })
  .chain((n) => (n === 0 ? fc.constant([]) : fc.tuple(...Array.from({ length: n }, (_, i) => nodeArb(i)))));

const predicateArb: fc.Arbitrary<Predicate> = fc.oneof(
  fc.record({
    attr: fc.constant('fps'),
    op: fc.constantFrom('gte', 'lte'),
    value: fc.integer({ min: 0, max: 60 }),
  }),
  fc.record({ attr: fc.constant('fps'), op: fc.constant('eq'), value: fc.integer({ min: 0, max: 60 }) }),
  fc.record({ attr: fc.constant('kind'), op: fc.constant('in'), value: fc.subarray(['usb', 'csi', 'pci']) }),
  fc.record({ attr: fc.constant('kind'), op: fc.constant('eq'), value: fc.constantFrom('usb', 'csi') }),
  fc.record({ attr: fc.constant('formats'), op: fc.constant('has'), value: fc.constantFrom('h264', 'raw') }),
  fc.record({ attr: fc.constant('missing'), op: fc.constant('eq'), value: fc.constant(1) }),
) as fc.Arbitrary<Predicate>;

const feedReqArb: fc.Arbitrary<Requirement> = fc
  .record({
    by: fc.constantFrom('id', 'prefix', 'prefix2'),
    where: fc.array(predicateArb, { maxLength: 2 }),
    count: fc.integer({ min: 1, max: 2 }),
    exclusive: fc.boolean(),
    min: fc.option(fc.constantFrom(...PROVENANCES)),
  })
  .map((o) => ({
    ...(o.by === 'id' ? { id: 'feed.cam.0' } : { id_prefix: o.by === 'prefix' ? 'feed.cam' : 'feed' }),
    ...(o.where.length === 0 ? {} : { where: o.where }),
    ...(o.count === 1 ? {} : { count: o.count }),
    ...(o.exclusive ? { exclusive: true } : {}),
    ...(o.min === null ? {} : { min_provenance: o.min }),
  }));

const requestArb: fc.Arbitrary<PlacementRequest> = fc
  .record({
    arch: fc.constantFrom('aarch64', 'x86_64'),
    memory: fc.integer({ min: 0, max: 1024 }),
    cpu: fc.integer({ min: 0, max: 200 }),
    tier: fc.constantFrom(...NODE_TIERS),
    feed: fc.option(feedReqArb),
    emulated: fc.boolean(),
    allow: fc.boolean(),
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
          ...(o.feed === null ? [] : [o.feed]),
        ],
      },
      ...(o.emulated
        ? [
            {
              name: `${o.arch}-container`,
              execution: 'emulated' as const,
              requirements: [
                {
                  id_prefix: 'runtime.container',
                  where: [{ attr: 'arches_emulated', op: 'has' as const, value: o.arch }],
                },
              ],
            },
          ]
        : []),
    ],
    resources: { memory_mb: o.memory, cpu_pct: o.cpu },
    min_tier: o.tier,
    ...(o.allow ? { allow_emulation: true } : {}),
  }));

/** Governance: a verdict per node id (a missing node is denied), or none at all. */
const governanceArb: fc.Arbitrary<Record<string, GovernanceVerdict> | undefined> = fc.option(
  fc.dictionary(
    fc.integer({ min: 0, max: 11 }).map((i) => `n${String(i).padStart(2, '0')}`),
    fc.constantFrom<GovernanceVerdict>({ verdict: 'permit' }, { verdict: 'deny', reason: 'policy' }),
  ),
  { nil: undefined },
);

// ---- An independent statement of the engine's contract -----------------------------------------
// Written from docs/placement.md, not with the engine's code: requirement matching, predicates,
// provenance, states, claims and counts are evaluated here from scratch.

const rank = (list: readonly string[], v: string): number => list.indexOf(v);

function predicateOk(value: unknown, p: Predicate): boolean {
  if (value === undefined) return false;
  switch (p.op) {
    case 'eq':
      return JSON.stringify(value) === JSON.stringify(p.value);
    case 'gte':
      return typeof value === 'number' && typeof p.value === 'number' && value >= p.value;
    case 'lte':
      return typeof value === 'number' && typeof p.value === 'number' && value <= p.value;
    case 'in':
      return !Array.isArray(value) && Array.isArray(p.value) && p.value.some((x) => x === value);
    case 'has':
      return Array.isArray(value) && !Array.isArray(p.value) && value.some((x) => x === p.value);
  }
}

function requirementMet(r: Requirement, caps: readonly Capability[], claimed: ReadonlySet<string>): boolean {
  const usable = caps.filter((c) => {
    const idOk =
      r.id !== undefined ? c.id === r.id : c.id === r.id_prefix || c.id.startsWith(`${r.id_prefix}.`);
    if (!idOk) return false;
    if (rank(PROVENANCES, c.provenance) < rank(PROVENANCES, r.min_provenance ?? 'claimed')) return false;
    if (!(r.where ?? []).every((p) => predicateOk(c.attrs[p.attr], p))) return false;
    const exclusive = r.exclusive === true || c.exclusive;
    if (c.state === 'reserved' || (c.state === 'busy' && exclusive)) return false;
    return !claimed.has(c.id);
  });
  return usable.length >= (r.count ?? 1);
}

/** The execution tier (0 native, 1 fallback, 2 emulated) a node can run the request at, or -1. */
function eligibleTier(
  req: PlacementRequest,
  n: ViewNode,
  state: PlacementState,
  gov: Record<string, GovernanceVerdict> | undefined,
): number {
  const u = state.usage(n.node_id);
  if (state.isNodeRevoked(n.node_id) || n.liveness !== 'alive' || NOW >= n.expires_at_ms) return -1;
  if (rank(NODE_TIERS, n.tier) < rank(NODE_TIERS, req.min_tier ?? 'discovered')) return -1;
  const mem = req.resources?.memory_mb ?? 0;
  if (mem > 0 && (u?.memory_mb ?? 0) + mem > Math.max(0, n.memory_mb)) return -1;
  if ((u?.cpu_pct ?? 0) + (req.resources?.cpu_pct ?? 0) > n.cpu_capacity) return -1;
  const claimed = u?.claims ?? new Set<string>();
  const order = ['native', 'dev_fallback', 'emulated'];
  const fits = req.variants
    .filter((v) => v.execution !== 'emulated' || req.allow_emulation === true)
    .filter((v) => v.requirements.every((r) => requirementMet(r, n.caps, claimed)))
    .map((v) => order.indexOf(v.execution));
  if (fits.length === 0) return -1;
  if (gov !== undefined && gov[n.node_id]?.verdict !== 'permit') return -1;
  return Math.min(...fits);
}

describe('engine properties', () => {
  it('a chosen node satisfies every hard constraint at the best tier; unplaceable exactly when no node passes', () => {
    fc.assert(
      fc.property(
        fleetArb,
        requestArb,
        governanceArb,
        fc.integer({ min: 1, max: 5 }),
        (fleet, req, gov, k) => {
          const view = PlacementView.create(fleet);
          const state = new PlacementState();
          const o = {
            now_ms: NOW,
            max_candidates: k,
            sample_above_nodes: 0,
            ...(gov ? { governance: gov } : {}),
          };
          const d = place(req, view, state, o);
          // The second and third use of one request go through the view's memo: same decision.
          place(req, view, state, o);
          expect(place(req, view, state, o)).toEqual(d);
          const tiers = view.nodes.map((n) => eligibleTier(req, n, state, gov));
          const feasible = tiers.filter((t) => t >= 0);
          expect(d.outcome === 'unplaceable').toBe(feasible.length === 0);
          if (d.outcome === 'placed') {
            const t = eligibleTier(req, view.get(d.node_id)!, state, gov);
            expect(t).toBeGreaterThanOrEqual(0);
            expect(['native', 'dev_fallback', 'emulated'].indexOf(d.execution)).toBe(Math.min(...feasible));
            expect(t).toBe(Math.min(...feasible));
          }
          if (d.outcome === 'unplaceable' && d.nodes_evaluated === 0 && view.size > 0) {
            // Answered from the capability index (sampling applies): each variant the request may run
            // needs a capability no node has, and every node counts under requirements.
            for (const v of req.variants) {
              if (v.execution === 'emulated' && req.allow_emulation !== true) continue;
              const absent = v.requirements.some((r) =>
                view.nodes.every((n) =>
                  n.caps.every(
                    (c) =>
                      c.id !== (r.id ?? r.id_prefix) &&
                      !(r.id_prefix !== undefined && c.id.startsWith(`${r.id_prefix}.`)),
                  ),
                ),
              );
              expect(absent).toBe(true);
            }
            expect(d.rejected).toEqual([]);
            expect(d.rejected_by_constraint).toEqual({ requirements: view.size });
            return;
          }
          if (d.outcome === 'unplaceable')
            expect(d.rejected.map((r) => r.node_id)).toEqual(view.nodes.map((n) => n.node_id));
          // Each rejected node counts once under each constraint it failed, and says nothing twice.
          const perNode: Record<string, number> = {};
          for (const r of d.rejected) {
            for (const c of new Set(r.failures.map((f) => f.constraint))) perNode[c] = (perNode[c] ?? 0) + 1;
            const lines = r.failures.map((f) => `${f.constraint}: ${f.detail}`);
            expect(new Set(lines).size).toBe(lines.length);
          }
          expect(d.rejected_by_constraint).toEqual(perNode);
          // Exact scoring (no sampling) chooses the best of all eligible nodes: never worse.
          const all = place(req, view, state, { ...o, sample_above_nodes: Number.POSITIVE_INFINITY });
          if (d.outcome === 'placed' && all.outcome === 'placed')
            expect(all.score).toBeGreaterThanOrEqual(d.score);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('reservations never overcommit, and an exclusive capability is never claimed twice on a node', () => {
    fc.assert(
      fc.property(fleetArb, fc.array(requestArb, { minLength: 1, maxLength: 40 }), (fleet, reqs) => {
        const view = PlacementView.create(fleet);
        const state = new PlacementState();
        for (const req of [...reqs, ...reqs]) {
          const { decision } = placeAndReserve(req, view, state, {
            now_ms: NOW,
            max_candidates: 3,
            sample_above_nodes: 0,
          });
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
          // Every exclusive capability held by a reservation is claimed by exactly that one.
          for (const c of n.caps.filter((x) => x.exclusive)) {
            expect(rs.filter((r) => (r.claims ?? []).includes(c.id)).length).toBeLessThanOrEqual(1);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses invalid requests with a PlacementError naming a field, and accepts valid ones', () => {
    const valid = requestArb;
    const mutated = fc
      .tuple(
        valid,
        fc.constantFrom('workload', 'variants', 'resources', 'min_tier', 'extra', 'prefer'),
        fc.anything(),
      )
      .map(([r, key, junk]) => ({ ...r, [key]: junk }));
    fc.assert(
      fc.property(fc.oneof(fc.anything(), mutated, valid), (input) => {
        const ok = PlacementRequestSchema.safeParse(input).success;
        if (ok) {
          expect(() => parsePlacementRequest(input)).not.toThrow();
          return;
        }
        try {
          parsePlacementRequest(input);
          expect.unreachable('an invalid request was accepted');
        } catch (e) {
          expect(e).toBeInstanceOf(PlacementError);
          expect((e as PlacementError).code).toBe('invalid_request');
          expect(typeof (e as PlacementError).field).toBe('string');
        }
      }),
    );
    // Invalid inputs do occur among the generated ones (the property is not vacuous).
    fc.assert(
      fc.property(
        mutated.filter((x) => !PlacementRequestSchema.safeParse(x).success),
        (input) => {
          expect(() => parsePlacementRequest(input)).toThrow(PlacementError);
        },
      ),
      { numRuns: 50 },
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
