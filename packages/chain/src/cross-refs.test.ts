import { describe, expect, it } from 'vitest';
import { verifyCrossReferences } from './cross-refs.js';
import { openMemoryChain } from './open.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const C = 'c'.repeat(32);

/** Two controllers' chains: A places, B (its successor) stops what A placed and takes over from A. */
async function twoChains() {
  const a = await openMemoryChain();
  const b = await openMemoryChain();
  const leadA = await a.append('controller', 'controller.leader', {
    controller: A,
    epoch: 1,
    previous: null,
  });
  const placed = await a.append('workload.placement', 'workload.place', { controller: A, phase: 'decision' });
  await b.append('controller', 'controller.leader', {
    controller: B,
    epoch: 2,
    refers_to: [{ controller: A, event: leadA.hash, kind: 'controller.leader' }],
  });
  await b.append('workload.placement', 'workload.stop', {
    controller: B,
    phase: 'decision',
    refers_to: [{ controller: null, event: placed.hash, kind: 'workload.place' }],
  });
  return { a, b, leadA, placed };
}

describe('verifyCrossReferences', () => {
  it('resolves references to a named controller and to an event found by hash alone', async () => {
    const { a, b } = await twoChains();
    const r = verifyCrossReferences([
      { name: 'a.jsonl', events: a.range(0) },
      { name: 'b.jsonl', events: b.range(0) },
    ]);
    expect(r).toMatchObject({ ok: true, references: 2, resolved: 2, unresolved: [], failures: [] });
    expect(r.controllers).toEqual([
      { chain: 'a.jsonl', controller: A },
      { chain: 'b.jsonl', controller: B },
    ]);
  });

  it('reports references to chains not given as unresolved, not failed', async () => {
    const { b } = await twoChains();
    const r = verifyCrossReferences([{ name: 'b.jsonl', events: b.range(0) }]);
    expect(r).toMatchObject({ ok: true, references: 2, resolved: 0 });
    expect(r.unresolved.map((u) => u.reason)).toEqual([
      `the chain of controller ${A} was not given`,
      expect.stringMatching(/^no given chain holds event/),
    ]);
  });

  it('fails a reference to an event the named chain lacks, of another kind, or malformed', async () => {
    const { a, b, placed } = await twoChains();
    await b.append('controller', 'controller.leader', {
      controller: B,
      epoch: 4,
      refers_to: [{ controller: A, event: 'f'.repeat(64), kind: 'controller.leader' }],
    });
    await b.append('controller', 'controller.leader', {
      controller: B,
      epoch: 5,
      refers_to: [{ controller: A, event: placed.hash, kind: 'controller.leader' }],
    });
    await b.append('x', 'x.y', { controller: B, refers_to: [{ controller: 'nope', event: placed.hash }] });
    await b.append('x', 'x.y', { controller: B, refers_to: 'nope' });
    const other = await openMemoryChain();
    await other.append('x', 'x.y', { controller: C });
    const r = verifyCrossReferences([
      { name: 'a', events: a.range(0) },
      { name: 'b', events: b.range(0) },
      { name: 'c', events: other.range(0) },
    ]);
    expect(r.ok).toBe(false);
    expect(r.failures.map((f) => f.reason)).toEqual([
      `controller ${A}'s chain (a) has no event ${'f'.repeat(64)}`,
      `event ${placed.hash} is a workload.place, not a controller.leader`,
      'refers_to.controller: expected a node id (32 lower-case hex) or null',
      'refers_to: expected an array',
    ]);
  });
});
