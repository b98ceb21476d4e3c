import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedCache, bytesKey } from './bounded-cache.js';

describe('BoundedCache', () => {
  it('never holds more than its capacity, whatever is added', () => {
    const cache = new BoundedCache<number, number>(16);
    for (let i = 0; i < 10_000; i++) {
      cache.set(i, i * 2);
      expect(cache.size).toBeLessThanOrEqual(16);
    }
    expect(cache.size).toBe(16);
    // The last 16 are held, with their own values; the rest were evicted.
    for (let i = 10_000 - 16; i < 10_000; i++) expect(cache.get(i)).toBe(i * 2);
    for (let i = 0; i < 10_000 - 16; i++) expect(cache.get(i)).toBeUndefined();
  });

  it('evicts the least recently used entry: a read keeps an entry alive', () => {
    const cache = new BoundedCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1); // a is now the most recent; b the least
    cache.set('d', 4);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, 3, 4]);
    cache.set('c', 30); // replacing does not grow it
    expect(cache.size).toBe(3);
    expect(cache.get('c')).toBe(30);
  });

  it('a hot key survives any number of other keys passing through', () => {
    const cache = new BoundedCache<number, string>(8);
    cache.set(-1, 'hot');
    for (let i = 0; i < 5000; i++) {
      cache.set(i, String(i));
      expect(cache.get(-1)).toBe('hot');
    }
  });

  it('agrees with an unbounded map on every value it returns (many keys, random order)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.array(fc.nat(300), { maxLength: 2000 }), (cap, ops) => {
        const cache = new BoundedCache<number, number>(cap);
        const made: number[] = [];
        for (const k of ops) {
          const v = cache.getOrSet(k, (key) => {
            made.push(key);
            return key * 7 + 1;
          });
          expect(v).toBe(k * 7 + 1);
          expect(cache.size).toBeLessThanOrEqual(cap);
        }
        // Each key is computed at most once per stay in the cache, so never more often than it is asked.
        expect(made.length).toBeLessThanOrEqual(ops.length);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps null values (a cached negative answer) apart from absence', () => {
    const cache = new BoundedCache<string, string | null>(2);
    cache.set('x', null);
    expect(cache.get('x')).toBeNull();
    expect(cache.get('y')).toBeUndefined();
  });

  it('refuses a capacity that is not a positive integer', () => {
    for (const c of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new BoundedCache(c)).toThrow(RangeError);
    }
  });
});

describe('bytesKey', () => {
  it('is one character per byte and tells different byte strings apart', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        expect(bytesKey(a)).toHaveLength(a.length);
        expect(bytesKey(a) === bytesKey(b)).toBe(Buffer.from(a).equals(Buffer.from(b)));
      }),
      { numRuns: 500 },
    );
  });

  it('reads only the view, not the rest of its buffer', () => {
    const backing = new Uint8Array([1, 2, 3, 4, 5, 6]);
    expect(bytesKey(backing.subarray(2, 4))).toBe(bytesKey(new Uint8Array([3, 4])));
  });
});

describe('BoundedCache.resize', () => {
  it('grows to hold more entries, and shrinking evicts the least recent', () => {
    const c = new BoundedCache<number, number>(2);
    c.set(1, 1);
    c.set(2, 2);
    c.resize(3);
    c.set(3, 3);
    expect([c.get(1), c.get(2), c.get(3)]).toEqual([1, 2, 3]);
    c.resize(1);
    expect(c.size).toBe(1);
    expect(c.get(3)).toBe(3);
    expect(() => c.resize(0)).toThrow(RangeError);
  });
});
