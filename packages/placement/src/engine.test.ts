import { describe, expect, it } from 'vitest';
import type { ConstraintName, Decision, GovernanceVerdict } from './decision.js';
import { place, placeAndReserve } from './engine.js';
import { PlacementError } from './errors.js';
import { explain, explainJson } from './explain.js';
import { cap, type NodeOpts, nativeRequest, node } from './fixtures.test-util.js';
import type { PlacementRequest } from './request.js';
import { PlacementState } from './state.js';
import { type NodeInput, PlacementView } from './view.js';

const NOW = 1_000_000;
const opts = { now_ms: NOW };

function placed(d: Decision) {
  if (d.outcome !== 'placed') throw new Error(`expected placed, got ${d.outcome}: ${explain(d)}`);
  return d;
}

interface ConstraintCase {
  constraint: ConstraintName;
  bad?: NodeOpts;
  request?: Partial<PlacementRequest>;
  setup?: (s: PlacementState) => void;
  governance?: Record<string, GovernanceVerdict>;
}

const container = (arches_native: string[], arches_emulated: string[]) =>
  cap('runtime.container.docker', { attrs: { arches_native, arches_emulated } });

describe('phase A: every constraint, recorded per node', () => {
  const cases: ConstraintCase[] = [
    { constraint: 'revoked_node', setup: (s) => s.revokeNode('bad') },
    { constraint: 'liveness', bad: { liveness: 'suspect' } },
    { constraint: 'liveness', bad: { liveness: 'dead' } },
    { constraint: 'liveness', bad: { liveness: 'unknown' } },
    { constraint: 'facts_expired', bad: { expires: NOW } },
    { constraint: 'tier', bad: { tier: 'discovered' }, request: { min_tier: 'paired' } },
    { constraint: 'cordoned', bad: { cordoned: true } },
    {
      constraint: 'labels',
      bad: { labels: { room: 'hall' } },
      request: { constraints: [{ label: 'room', value: 'kitchen' }] },
    },
    {
      constraint: 'labels',
      bad: { labels: {} },
      request: { constraints: [{ label: 'room', value: 'kitchen' }] },
    },
    {
      constraint: 'co_residency',
      setup: (s) => s.reserve({ node_id: 'bad', workload: 'db' }),
      request: { exclude_coresident: ['db'] },
    },
    {
      constraint: 'co_residency',
      setup: (s) => s.reserve({ node_id: 'bad', workload: 'db', excludes: ['w'] }),
    },
    { constraint: 'memory', bad: { memory: 100 } },
    { constraint: 'memory', setup: (s) => s.reserve({ node_id: 'bad', workload: 'x', memory_mb: 4000 }) },
    {
      constraint: 'cpu',
      bad: { cores: 1 },
      setup: (s) => s.reserve({ node_id: 'bad', workload: 'x', cpu_pct: 80 }),
    },
    { constraint: 'requirements', bad: { arch: 'x86_64' } },
    { constraint: 'requirements', bad: { native: false } },
    {
      constraint: 'emulation',
      bad: { native: false, arch: 'x86_64', extra: [container(['x86_64'], ['aarch64'])] },
      request: {
        variants: [
          {
            name: 'c',
            execution: 'native',
            requirements: [
              {
                id_prefix: 'runtime.container',
                where: [{ attr: 'arches_native', op: 'has', value: 'aarch64' }],
              },
            ],
          },
          {
            name: 'c',
            execution: 'emulated',
            requirements: [
              {
                id_prefix: 'runtime.container',
                where: [{ attr: 'arches_emulated', op: 'has', value: 'aarch64' }],
              },
            ],
          },
        ],
      },
    },
    {
      constraint: 'governance',
      governance: { good: { verdict: 'permit' }, bad: { verdict: 'deny', reason: 'no', rule: 'r1' } },
    },
    {
      constraint: 'governance',
      governance: { good: { verdict: 'permit' }, bad: { verdict: 'defer', reason: 'ask' } },
    },
    { constraint: 'governance', governance: { good: { verdict: 'permit' } } },
  ];

  it.each(cases)('$constraint', (c) => {
    const goodExtra =
      c.constraint === 'emulation'
        ? { extra: [container(['aarch64'], [])] }
        : c.constraint === 'labels'
          ? { labels: { room: 'kitchen' } }
          : {};
    const view = PlacementView.create([node('bad', c.bad), node('good', goodExtra)]);
    const state = new PlacementState();
    c.setup?.(state);
    const request = nativeRequest(c.request);
    const o = { ...opts, ...(c.governance ? { governance: c.governance } : {}) };
    // Placed on the good node; the bad one is rejected with that constraint.
    const d = placed(place(request, view, state, o));
    expect(d.node_id).toBe('good');
    // A node lacking the rarest required capability is skipped by the index, not evaluated.
    if (c.constraint !== 'requirements') {
      const rej = d.rejected.find((r) => r.node_id === 'bad');
      expect(rej?.failures.map((f) => f.constraint)).toContain(c.constraint);
      expect(d.rejected_by_constraint[c.constraint]).toBe(1);
    }
    // Pinned to the bad node: an error naming the constraint.
    const p = place({ ...request, pin: 'bad' }, view, state, o);
    expect(p.outcome).toBe('pin_refused');
    if (p.outcome === 'pin_refused') {
      expect(p.error.code).toBe('pin_ineligible');
      expect(p.error.message).toContain(c.constraint);
      expect(p.failures.map((f) => f.constraint)).toContain(c.constraint);
    }
    // Only the bad node: unplaceable, with its reasons.
    const only = PlacementView.create([node('bad', c.bad)]);
    const u = place(request, only, state, o);
    expect(u.outcome).toBe('unplaceable');
    expect(u.rejected).toHaveLength(1);
    expect(u.rejected[0]?.failures.map((f) => f.constraint)).toContain(c.constraint);
  });

  it('workload_revoked refuses every node', () => {
    const view = PlacementView.create([node('a'), node('b')]);
    const state = new PlacementState();
    state.revokePackage('pkg');
    const d = place(nativeRequest({ package_id: 'pkg' }), view, state, opts);
    expect(d.outcome).toBe('unplaceable');
    expect(d.rejected.map((r) => r.failures[0]?.constraint)).toEqual([
      'workload_revoked',
      'workload_revoked',
    ]);
  });

  it('records every failed constraint of a node, and every node when unplaceable', () => {
    const view = PlacementView.create([
      node('a', { liveness: 'dead', memory: 10, tier: 'discovered' }),
      node('b', { arch: 'x86_64' }),
      node('c', { expires: 5 }),
    ]);
    const d = place(nativeRequest({ min_tier: 'paired' }), view, new PlacementState(), opts);
    expect(d.outcome).toBe('unplaceable');
    expect(d.rejected.map((r) => r.node_id)).toEqual(['a', 'b', 'c']);
    expect(d.rejected[0]?.failures.map((f) => f.constraint)).toEqual(['liveness', 'tier', 'memory']);
    expect(d.rejected[1]?.failures[0]).toMatchObject({
      constraint: 'requirements',
      reason: 'no_such_id',
      variant: 'aarch64-native',
    });
    expect(d.rejected_by_constraint).toEqual({
      liveness: 1,
      tier: 1,
      memory: 1,
      requirements: 1,
      facts_expired: 1,
    });
    expect(explain(d)).toMatch(/unplaceable/);
  });

  it('uses one memory pool on mem.unified nodes', () => {
    const unified = node('u', {
      memory: 1000,
      extra: [cap('mem.unified'), cap('accel.gpu', { attrs: { memory_mb: 900 } })],
    });
    const split = node('s', { memory: 1000, extra: [cap('accel.gpu', { attrs: { memory_mb: 512 } })] });
    const req = nativeRequest({ resources: { memory_mb: 600, accel_memory_mb: 500 } });
    const d = placed(place(req, PlacementView.create([unified, split]), new PlacementState(), opts));
    expect(d.node_id).toBe('s');
    expect(d.rejected[0]?.failures[0]?.detail).toMatch(/1100 MB.*unified/);
    const small = place(
      { ...req, resources: { memory_mb: 600, accel_memory_mb: 600 } },
      PlacementView.create([split]),
      new PlacementState(),
      opts,
    );
    expect(small.rejected[0]?.failures[0]?.detail).toMatch(/accelerator memory/);
  });

  it('chooses native first and emulated only when allowed', () => {
    const req: PlacementRequest = {
      workload: 'w',
      variants: [
        {
          name: 'x86_64-container',
          execution: 'emulated',
          requirements: [
            {
              id_prefix: 'runtime.container',
              where: [{ attr: 'arches_emulated', op: 'has', value: 'x86_64' }],
            },
          ],
        },
        { name: 'wasm32-wasi', execution: 'dev_fallback', requirements: [{ id: 'runtime.wasi' }] },
        { name: 'x86_64-native', execution: 'native', requirements: [{ id: 'cpu.arch.x86_64' }] },
      ],
      allow_emulation: true,
    };
    const emu = node('emu', { extra: [container([], ['x86_64'])] });
    const wasi = node('wasi', { extra: [cap('runtime.wasi')] });
    const nat = node('nat', { arch: 'x86_64' });
    const state = new PlacementState();
    // Even strong preferences never lift a lower execution tier over a higher one.
    const prefer = [{ node_id: 'emu' }, { node_id: 'wasi' }];
    const w = { ...opts, weights: { affinity: 10_000 } };
    expect(placed(place({ ...req, prefer }, PlacementView.create([emu, wasi, nat]), state, w)).node_id).toBe(
      'nat',
    );
    const d = placed(place({ ...req, prefer }, PlacementView.create([emu, wasi]), state, w));
    expect([d.node_id, d.execution, d.variant]).toEqual(['wasi', 'dev_fallback', 'wasm32-wasi']);
    expect(placed(place(req, PlacementView.create([emu]), state, opts)).execution).toBe('emulated');
    const no = place({ ...req, allow_emulation: false }, PlacementView.create([emu]), state, opts);
    expect(no.outcome).toBe('unplaceable');
    expect(no.rejected[0]?.failures.map((f) => f.constraint)).toEqual([
      'requirements',
      'requirements',
      'emulation',
    ]);
  });

  it('governance callbacks see the variant', () => {
    const seen: string[] = [];
    const view = PlacementView.create([node('a'), node('b')]);
    const d = placed(
      place(nativeRequest(), view, new PlacementState(), {
        ...opts,
        governance: (id, variant) => {
          seen.push(`${id}:${variant.name}`);
          return id === 'a' ? { verdict: 'deny', reason: 'policy' } : { verdict: 'permit' };
        },
      }),
    );
    expect(d.node_id).toBe('b');
    expect(d.governance_checked).toBe(true);
    expect(seen).toContain('b:aarch64-native');
    const m = new Map<string, GovernanceVerdict>([['a', { verdict: 'permit' }]]);
    expect(
      placed(place(nativeRequest(), view, new PlacementState(), { ...opts, governance: m })).node_id,
    ).toBe('a');
  });
});

describe('phase B: score parts', () => {
  const base = nativeRequest();
  const cases: [
    string,
    NodeInput,
    NodeInput,
    Partial<PlacementRequest>,
    keyof Decision['weights'] | 'execution',
    number,
  ][] = [
    [
      'affinity prefer by label',
      node('a', { labels: { zone: 'x' } }),
      node('b'),
      { prefer: [{ label: 'zone', value: 'x' }] },
      'affinity',
      25,
    ],
    ['affinity avoid by node', node('b'), node('a'), { avoid: [{ node_id: 'a' }] }, 'affinity', 25],
    [
      'accelerator fit (not needed: keep accelerators free)',
      node('b'),
      node('a', { extra: [cap('accel.gpu')] }),
      {},
      'accelerator_fit',
      10,
    ],
    [
      'accelerator fit (needed)',
      node('b', { extra: [cap('accel.gpu'), cap('accel.npu')] }),
      node('a', { extra: [cap('accel.gpu')] }),
      {},
      'measured_performance',
      0,
    ],
    [
      'measured performance',
      node('b', { extra: [cap('perf.cpu', { provenance: 'measured', attrs: { score: 500 } })] }),
      node('a', { extra: [cap('perf.cpu', { provenance: 'probed', attrs: { score: 900 } })] }),
      {},
      'measured_performance',
      15,
    ],
    // b: cpu 50 of 400 -> load 0.125; a: outside load 0.8 -> 10 x (0.875 - 0.2).
    ['load', node('b', { load: 0 }), node('a', { load: 800 }), {}, 'load', 6.75],
    ['stickiness', node('b'), node('a'), { previous_nodes: ['b'] }, 'stickiness', 15],
  ];
  it.each(cases)('%s', (_n, winner, loser, more, part, delta) => {
    const d = placed(
      place({ ...base, ...more }, PlacementView.create([winner, loser]), new PlacementState(), opts),
    );
    const [first, second] = d.candidates;
    if (delta === 0) return; // the accelerator-needed case is checked below
    expect(d.node_id).toBe(winner.node_id);
    const p = part as keyof NonNullable<typeof first>['parts'];
    expect(first!.parts[p] - second!.parts[p]).toBeCloseTo(delta, 6);
    expect(first!.score - second!.score).toBeCloseTo(delta, 6);
  });

  it('accelerator fit rewards accelerators when the workload needs one', () => {
    const req = nativeRequest();
    const withGpu: PlacementRequest = {
      ...req,
      variants: [
        { ...req.variants[0]!, requirements: [...req.variants[0]!.requirements, { id_prefix: 'accel.gpu' }] },
      ],
    };
    const d = placed(
      place(
        withGpu,
        PlacementView.create([node('a', { extra: [cap('accel.gpu.0')] })]),
        new PlacementState(),
        opts,
      ),
    );
    expect(d.candidates[0]?.parts.accelerator_fit).toBe(10);
  });

  it('execution tier weights are the defaults and configurable', () => {
    const d = placed(place(nativeRequest(), PlacementView.create([node('a')]), new PlacementState(), opts));
    expect(d.candidates[0]?.parts.execution).toBe(100);
    expect(d.weights).toMatchObject({
      native: 100,
      dev_fallback: 40,
      emulated: 20,
      accelerator_fit: 10,
      measured_performance: 30,
      load: 10,
      stickiness: 15,
    });
    const e = placed(
      place(nativeRequest(), PlacementView.create([node('a')]), new PlacementState(), {
        ...opts,
        weights: { native: 7 },
      }),
    );
    expect(e.candidates[0]?.parts.execution).toBe(7);
  });

  it('spreads replicas across a label', () => {
    const nodes = ['a1', 'a2', 'a3', 'b1', 'c1'].map((id) => node(id, { labels: { zone: id[0]! } }));
    const view = PlacementView.create(nodes);
    const state = new PlacementState();
    const req = nativeRequest({ spread: { label: 'zone' }, resources: { memory_mb: 1 } });
    const zones: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { decision } = placeAndReserve(req, view, state, opts);
      zones.push(placed(decision).node_id[0]!);
    }
    expect(zones.slice(0, 3).sort()).toEqual(['a', 'b', 'c']);
    expect(zones.slice(3).sort()).toEqual(['a', 'b', 'c']);
  });

  it('orders by score then node id', () => {
    const view = PlacementView.create([node('c'), node('a'), node('b')]);
    const d = placed(place(nativeRequest(), view, new PlacementState(), opts));
    expect(d.node_id).toBe('a');
    expect(d.candidates.map((c) => c.node_id)).toEqual(['a', 'b', 'c']);
  });
});

describe('pins, reservations, determinism, sampling', () => {
  it('pins override scoring but not constraints', () => {
    const view = PlacementView.create([node('a', { load: 900 }), node('b')]);
    const d = placed(place(nativeRequest({ pin: 'a' }), view, new PlacementState(), opts));
    expect([d.node_id, d.pinned]).toEqual(['a', true]);
    const u = place(nativeRequest({ pin: 'zz' }), view, new PlacementState(), opts);
    expect(u.outcome === 'pin_refused' && u.error.code).toBe('unknown_node');
    expect(explain(u)).toContain('pin to zz refused');
  });

  it('reservations make later decisions see what is taken, and never overcommit', () => {
    const view = PlacementView.create([node('a', { memory: 1000 }), node('b', { memory: 600 })]);
    const state = new PlacementState();
    const req = nativeRequest({ resources: { memory_mb: 500, cpu_pct: 10 } });
    const got: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { decision } = placeAndReserve(req, view, state, opts);
      if (decision.outcome === 'placed') got.push(decision.node_id);
      else got.push(decision.outcome);
    }
    expect(got.sort()).toEqual(['a', 'a', 'b', 'unplaceable']);
    expect(state.usage('a')?.memory_mb).toBe(1000);
    const first = [...state.reservations()][0]!;
    state.release(first.id);
    expect(placed(place(req, view, state, opts)).node_id).toBe(first.node_id);
    expect(() => state.reserve({ node_id: 'a', workload: 'x', memory_mb: 10_000 }, view)).toThrow(
      PlacementError,
    );
    expect(() => state.release('nope')).toThrow(/no reservation/);
  });

  it('exclusive capabilities are claimed and then contended', () => {
    const feed = cap('feed.udp5006', { exclusive: true });
    const view = PlacementView.create([node('a', { extra: [feed] })]);
    const req = nativeRequest({
      variants: [{ name: 'v', execution: 'native', requirements: [{ id: 'feed.udp5006' }] }],
    });
    const state = new PlacementState();
    const { decision } = placeAndReserve(req, view, state, opts);
    expect(placed(decision).reservation.claims).toEqual(['feed.udp5006']);
    const d2 = place(req, view, state, opts);
    expect(d2.outcome).toBe('unplaceable');
    expect(d2.rejected[0]?.failures[0]).toMatchObject({ constraint: 'requirements', reason: 'contended' });
    expect(() => state.reserve(decision)).toThrow(/already held/);
  });

  it('gives the same decision whatever the node order', () => {
    const nodes = Array.from({ length: 200 }, (_, i) =>
      node(`n${String(i).padStart(3, '0')}`, {
        memory: 512 + ((i * 37) % 7) * 256,
        load: (i * 53) % 1000,
        arch: i % 5 === 0 ? 'x86_64' : 'aarch64',
        labels: { zone: `z${i % 3}` },
      }),
    );
    const req = nativeRequest({ spread: { label: 'zone' } });
    const run = (ns: NodeInput[]) => {
      const view = PlacementView.create(ns);
      const state = new PlacementState();
      return Array.from({ length: 20 }, () =>
        JSON.stringify(placeAndReserve(req, view, state, opts).decision),
      );
    };
    const ref = run(nodes);
    for (let k = 0; k < 3; k++) {
      const shuffled = [...nodes].sort(() => Math.random() - 0.5);
      expect(run(shuffled)).toEqual(ref);
    }
  });

  it('bounds the candidate set on large fleets and says so', () => {
    const view = PlacementView.create(Array.from({ length: 1000 }, (_, i) => node(`n${i}`)));
    const d = placed(
      place(nativeRequest(), view, new PlacementState(), {
        ...opts,
        max_candidates: 8,
        sample_above_nodes: 999,
      }),
    );
    expect(d.sampled).toBe(true);
    expect(d.nodes_evaluated).toBe(8);
    expect(d.candidates).toHaveLength(8);
    const all = placed(
      place(nativeRequest(), view, new PlacementState(), {
        ...opts,
        max_candidates: Number.POSITIVE_INFINITY,
      }),
    );
    expect([all.sampled, all.nodes_evaluated, all.candidates.length]).toEqual([false, 1000, 1000]);
    // Summary detail keeps only the chosen candidate.
    const s = placed(place(nativeRequest(), view, new PlacementState(), { ...opts, detail: 'summary' }));
    expect(s.candidates).toHaveLength(1);
    expect(s.candidates[0]?.node_id).toBe(s.node_id);
  });

  it('uses the capability index: nodes without the rarest capability are not evaluated', () => {
    const nodes = Array.from({ length: 500 }, (_, i) =>
      node(`n${i}`, i === 250 ? { extra: [cap('accel.tpu')] } : {}),
    );
    const req = nativeRequest({
      variants: [
        { name: 'v', execution: 'native', requirements: [{ id: 'runtime.native' }, { id: 'accel.tpu' }] },
      ],
    });
    const d = placed(place(req, PlacementView.create(nodes), new PlacementState(), opts));
    expect([d.node_id, d.nodes_evaluated]).toEqual(['n250', 1]);
  });

  it('refuses junk options and views, naming the field', () => {
    const view = PlacementView.create([node('a')]);
    expect(() => place(nativeRequest(), view, new PlacementState(), { now_ms: Number.NaN })).toThrow(
      /now_ms/,
    );
    expect(() => place(nativeRequest(), view, new PlacementState(), { ...opts, max_candidates: 0 })).toThrow(
      /max_candidates/,
    );
    expect(() => PlacementView.create([node('a'), node('a')])).toThrow(/twice/);
    try {
      PlacementView.create([node('a'), { ...node('b'), tier: 'root' as never }]);
      expect.unreachable();
    } catch (e) {
      expect((e as PlacementError).code).toBe('invalid_view');
      expect((e as PlacementError).field).toBe('nodes[1].tier');
    }
  });
});

describe('explain', () => {
  it('renders a table and the same as JSON', () => {
    const view = PlacementView.create([
      node('good'),
      node('slow', { load: 500 }),
      node('tiny', { memory: 1 }),
    ]);
    const d = place(nativeRequest(), view, new PlacementState(), opts);
    const table = explain(d);
    const lines = table.trim().split('\n');
    expect(lines[0]).toMatch(/^w: placed on good \(aarch64-native, native, score \d+/);
    expect(lines[1]).toMatch(/^NODE\s+VERDICT\s+VARIANT\s+SCORE\s+DETAIL$/);
    expect(lines[2]).toMatch(
      /^good\s+chosen\s+aarch64-native \(native\)\s+[\d.]+\s+execution=100 accelerator_fit=10 load=/,
    );
    expect(lines[3]).toMatch(/^slow\s+candidate/);
    expect(lines[4]).toMatch(/^tiny\s+rejected\s+-\s+-\s+memory: needs 256 MB, 1 MB free of 1 MB$/);
    expect(table).toContain('rejections by constraint: memory 1');
    const json = JSON.parse(explain(d, 'json'));
    expect(json).toEqual(JSON.parse(JSON.stringify(explainJson(d))));
    expect(json.rows.map((r: { node_id: string; verdict: string }) => `${r.node_id}:${r.verdict}`)).toEqual([
      'good:chosen',
      'slow:candidate',
      'tiny:rejected',
    ]);
  });
});
