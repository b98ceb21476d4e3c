import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggestions } from './suggest.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and neighbour swaps', () => {
    expect(editDistance('node', 'node')).toBe(0);
    expect(editDistance('nod', 'node')).toBe(1);
    expect(editDistance('nodes', 'node')).toBe(1);
    expect(editDistance('nide', 'node')).toBe(1);
    expect(editDistance('ndoe', 'node')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('is a distance: zero only for equal words, symmetric, bounded by the longer length', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = editDistance(a, b);
        expect(d).toBe(editDistance(b, a));
        expect(d === 0).toBe(a === b);
        expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
        expect(d).toBeGreaterThanOrEqual(Math.abs(a.length - b.length));
      }),
    );
  });
});

describe('suggestions and didYouMean', () => {
  const commands = ['node', 'place', 'ps', 'alerts', 'status', 'logs', 'start', 'stop', 'unload'];

  it('suggests close words and prefixes, closest first', () => {
    expect(suggestions('plcae', commands)).toEqual(['place']);
    expect(suggestions('NODE', commands)).toEqual(['node']);
    expect(suggestions('unl', commands)).toEqual(['unload']);
    expect(suggestions('stat', commands)).toEqual(['start', 'status']);
    expect(suggestions('xyzzy', commands)).toEqual([]);
    expect(suggestions('', commands)).toEqual([]);
  });

  it('names one or two equally close candidates, or nothing', () => {
    expect(didYouMean('nod', commands)).toBe('; did you mean "node"?');
    expect(didYouMean('stp', commands)).toBe('; did you mean "stop"?');
    expect(didYouMean('sop', ['stop', 'shop'])).toBe('; did you mean "shop" or "stop"?');
    expect(didYouMean('xyzzy', commands)).toBe('');
  });

  it('never throws and only suggests candidates, for any input', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.array(fc.string({ maxLength: 10 }), { maxLength: 8 }),
        (w, cs) => {
          for (const s of suggestions(w, cs)) expect(cs).toContain(s);
          expect(typeof didYouMean(w, cs)).toBe('string');
        },
      ),
    );
  });
});
