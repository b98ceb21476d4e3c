import { describe, expect, it } from 'vitest';
import type { Decision, GovernanceVerdict } from './decision.js';
import { DEFAULT_SAMPLE_ABOVE_NODES, place } from './engine.js';
import { cap, nativeRequest, node } from './fixtures.test-util.js';
import type { PlacementRequest } from './request.js';
import { PlacementState } from './state.js';
import { PlacementView } from './view.js';

const NOW = 1_000_000;
const opts = { now_ms: NOW };

function placed(d: Decision) {
  if (d.outcome !== 'placed') throw new Error(`expected placed, got ${d.outcome}`);
  return d;
}

/** A fleet of `n` equal nodes, except that the node `best` has measured performance. */
function fleet(n: number, best?: number) {
  return Array.from({ length: n }, (_, i) =>
    node(`n${String(i).padStart(5, '0')}`, {
      labels: { zone: i === 4321 % n ? 'edge' : 'core' },
      ...(i === best
        ? {
            extra: [cap('perf.cpu', { provenance: 'measured', attrs: { score: 1000 } })],
            provenance: 'measured',
          }
        : {}),
    }),
  );
}

describe('sampling threshold', () => {
  it('scores every feasible node at or below the fleet-size threshold (exact ordering)', () => {
    expect(DEFAULT_SAMPLE_ABOVE_NODES).toBe(1000);
    // Before the fix, 32 nodes were sampled from any fleet over 32: the best-performing node was
    // missed unless it fell in the sample.
    for (const best of [7, 333, 999]) {
      const view = PlacementView.create(fleet(1000, best));
      const d = placed(place(nativeRequest(), view, new PlacementState(), opts));
      expect(d.sampled).toBe(false);
      expect(d.candidates).toHaveLength(1000);
      expect(d.node_id).toBe(`n${String(best).padStart(5, '0')}`);
    }
  });

  it('samples only above the threshold, which is an option', () => {
    const view = PlacementView.create(fleet(1001));
    const d = placed(place(nativeRequest(), view, new PlacementState(), opts));
    expect([d.sampled, d.candidates.length]).toEqual([true, 32]);
    const exact = placed(
      place(nativeRequest(), view, new PlacementState(), { ...opts, sample_above_nodes: Infinity }),
    );
    expect([exact.sampled, exact.candidates.length]).toEqual([false, 1001]);
    expect(() =>
      place(nativeRequest(), view, new PlacementState(), { ...opts, sample_above_nodes: -1 }),
    ).toThrow(/sample_above_nodes/);
  });

  it('always adds feasible sticky and preferred nodes to a sampled candidate set', () => {
    const view = PlacementView.create(fleet(3000));
    const state = new PlacementState();
    const base = placed(place(nativeRequest(), view, state, opts));
    expect(base.sampled).toBe(true);
    const sampledIds = new Set(base.candidates.map((c) => c.node_id));
    const outside = view.nodes.map((n) => n.node_id).filter((id) => !sampledIds.has(id));
    const [sticky, preferred] = [outside[100]!, outside[2000]!];
    const edge = view.nodes.find((n) => n.labels.zone === 'edge')!.node_id;
    expect(sampledIds.has(edge)).toBe(false);
    // Stickiness: the previous node is a candidate and wins (it scores 15 more than its equals).
    const s = placed(place(nativeRequest({ previous_nodes: [sticky] }), view, state, opts));
    expect(s.sampled).toBe(true);
    expect(s.node_id).toBe(sticky);
    // Affinity by node id and by label.
    const p = placed(place(nativeRequest({ prefer: [{ node_id: preferred }] }), view, state, opts));
    expect(p.node_id).toBe(preferred);
    const l = placed(place(nativeRequest({ prefer: [{ label: 'zone', value: 'edge' }] }), view, state, opts));
    expect(l.node_id).toBe(edge);
    // Infeasible ones are not added (a sticky node that is dead).
    const deadView = PlacementView.create(
      fleet(3000).map((n) => (n.node_id === sticky ? { ...n, liveness: 'dead' as const } : n)),
    );
    const dead = placed(place(nativeRequest({ previous_nodes: [sticky] }), deadView, state, opts));
    expect(dead.node_id).not.toBe(sticky);
    expect(dead.candidates.some((c) => c.node_id === sticky)).toBe(false);
  });
});

describe('request mutation', () => {
  it('a request object mutated and placed again gets the answer for its new content', () => {
    const view = PlacementView.create([
      node('a', { arch: 'aarch64' }),
      node('b', { arch: 'x86_64' }),
      node('c', { arch: 'aarch64', memory: 128 }),
    ]);
    const state = new PlacementState();
    const req = nativeRequest() as {
      -readonly [K in keyof PlacementRequest]: PlacementRequest[K];
    };
    // Three times: the third goes through the view's memo of phase A.
    for (let k = 0; k < 3; k++) expect(placed(place(req, view, state, opts)).node_id).toBe('a');
    (req.variants[0]!.requirements as { id: string }[])[0]!.id = 'cpu.arch.x86_64';
    expect(placed(place(req, view, state, opts)).node_id).toBe('b');
    req.min_tier = 'pinned';
    expect(place(req, view, state, opts).outcome).toBe('unplaceable');
    req.min_tier = 'paired';
    req.variants = [{ name: 'any', execution: 'native', requirements: [{ id: 'runtime.native' }] }];
    req.resources = { memory_mb: 4000 };
    expect(placed(place(req, view, state, opts)).node_id).toBe('a');
    req.prefer = [{ node_id: 'b' }];
    expect(placed(place(req, view, state, opts)).node_id).toBe('b');
  });
});

describe('re-entry', () => {
  it('a governance callback may call place on the same view without corrupting the outer decision', () => {
    const nodes = Array.from({ length: 50 }, (_, i) => node(`n${String(i).padStart(2, '0')}`));
    const view = PlacementView.create(nodes);
    const state = new PlacementState();
    const inner: string[] = [];
    const governance = (id: string): GovernanceVerdict => {
      const d = place(nativeRequest({ workload: 'inner', prefer: [{ node_id: 'n07' }] }), view, state, opts);
      if (d.outcome === 'placed') inner.push(d.node_id);
      return id === 'n13' || id === 'n31' ? { verdict: 'permit' } : { verdict: 'deny', reason: 'no' };
    };
    const d = place(nativeRequest(), view, state, { ...opts, governance });
    const reference = place(nativeRequest(), view, state, {
      ...opts,
      governance: (id) =>
        id === 'n13' || id === 'n31' ? { verdict: 'permit' } : { verdict: 'deny', reason: 'no' },
    });
    expect(d).toEqual(reference);
    expect(d.outcome === 'placed' && d.candidates.map((c) => c.node_id).sort()).toEqual(['n13', 'n31']);
    expect(d.nodes_evaluated).toBe(50);
    expect(inner.length).toBeGreaterThanOrEqual(50); // (asked again to record a denial)
    expect(new Set(inner)).toEqual(new Set(['n07']));
    // The view still works normally afterwards.
    expect(placed(place(nativeRequest({ prefer: [{ node_id: 'n40' }] }), view, state, opts)).node_id).toBe(
      'n40',
    );
  });
});
