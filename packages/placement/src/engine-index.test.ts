// The capability index answers an unplaceable request on a large fleet without evaluating a node, and
// a view takes a changed node in place (the controller's live view relies on both).
import { describe, expect, it } from 'vitest';
import { place } from './engine.js';
import { cap, nativeRequest, node } from './fixtures.test-util.js';
import { PlacementState } from './state.js';
import { PlacementView, type ViewNode } from './view.js';

const NOW = 1_000_000;
const fleet = (n: number) =>
  Array.from({ length: n }, (_, i) => node(`n${String(i).padStart(5, '0')}`, { native: i % 2 === 0 }));

describe('unplaceable from the capability index', () => {
  it('above the sampling threshold, a capability no node has is answered without evaluating a node', () => {
    const view = PlacementView.create(fleet(5000));
    // Every node reads as a trap once the view is built: evaluating one would throw. Before the index
    // answer, the unplaceable path evaluated all 5,000 nodes for their reasons.
    const trapped = view.nodes.map(
      (n) =>
        new Proxy(n, {
          get(target, key, receiver) {
            if (key === 'index' || key === 'node_id') return Reflect.get(target, key, receiver);
            throw new Error(`node ${target.node_id} was evaluated (${String(key)})`);
          },
        }),
    );
    // cast: the test swaps the view's nodes for traps (only its readonly face is public)
    (view.nodes as ViewNode[]).splice(0, view.nodes.length, ...trapped);
    const req = nativeRequest({
      variants: [
        {
          name: 'x86_64-gpu',
          execution: 'native',
          requirements: [{ id: 'cpu.arch.aarch64' }, { id: 'accel.gpu.cuda' }],
        },
      ],
    });
    const d = place(req, view, new PlacementState(), { now_ms: NOW });
    expect(d.outcome).toBe('unplaceable');
    expect(d.nodes_evaluated).toBe(0);
    expect(d.rejected).toEqual([]);
    expect(d.rejected_by_constraint).toEqual({ requirements: 5000 });
    if (d.outcome === 'unplaceable')
      expect(d.reason).toContain('no node offers accel.gpu.cuda (variant x86_64-gpu)');
  });

  it('at or below the threshold, every node is still evaluated and listed with its reasons', () => {
    const view = PlacementView.create(fleet(10));
    const req = nativeRequest({
      variants: [{ name: 'g', execution: 'native', requirements: [{ id: 'accel.gpu.cuda' }] }],
    });
    const d = place(req, view, new PlacementState(), { now_ms: NOW });
    expect(d.nodes_evaluated).toBe(10);
    expect(d.rejected).toHaveLength(10);
  });

  it('a capability some node has is scanned as before (half the fleet offers runtime.native)', () => {
    const view = PlacementView.create(fleet(5000));
    const d = place(nativeRequest(), view, new PlacementState(), { now_ms: NOW });
    expect(d.outcome).toBe('placed');
  });
});

describe('PlacementView.replace', () => {
  it('replaces a node in place when its capability ids are unchanged; the next decision sees it', () => {
    const view = PlacementView.create([node('a'), node('b')]);
    const req = nativeRequest({ pin: 'a' });
    expect(place(req, view, new PlacementState(), { now_ms: NOW }).outcome).toBe('placed');
    expect(view.replace({ ...node('a'), liveness: 'dead' })).toBe(true);
    expect(view.get('a')?.liveness).toBe('dead');
    expect(view.get('a')?.index).toBe(0);
    expect(place(req, view, new PlacementState(), { now_ms: NOW }).outcome).toBe('pin_refused');
  });

  it('refuses (changing nothing) an unknown node or other capability ids', () => {
    const view = PlacementView.create([node('a')]);
    expect(view.replace(node('zz'))).toBe(false);
    expect(view.replace(node('a', { extra: [cap('accel.gpu.cuda')] }))).toBe(false);
    expect(view.get('a')?.caps).toHaveLength(4);
  });
});
