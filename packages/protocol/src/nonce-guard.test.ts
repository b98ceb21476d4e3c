import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MinHeap } from './min-heap.js';
import { NonceGuard } from './nonce-guard.js';

const n = (i: number): string => i.toString(16).padStart(32, '0');

describe('NonceGuard', () => {
  it('records a nonce once and refuses it again as replay', () => {
    const g = new NonceGuard();
    expect(g.record(n(1), 60_000, 0)).toBe('recorded');
    expect(g.record(n(1), 60_000, 1)).toBe('replay');
    expect(g.has(n(1))).toBe(true);
    expect(g.size).toBe(1);
  });

  it('remembers a nonce until its expiry plus the skew (rounded up to the second)', () => {
    const g = new NonceGuard({ skewMs: 30_000 });
    g.record(n(1), 60_000, 0);
    expect(g.record(n(1), 60_000, 89_999)).toBe('replay');
    expect(g.record(n(1), 60_000, 90_000)).toBe('recorded'); // forgotten, so recorded afresh
    const h = new NonceGuard({ skewMs: 30_000 });
    h.record(n(2), 60_001, 0);
    expect(h.prune(90_999)).toBe(0);
    expect(h.prune(91_000)).toBe(1);
  });

  it('fails closed when full of unexpired nonces and recovers after expiry', () => {
    const g = new NonceGuard({ capacity: 3, skewMs: 0 });
    expect(g.record(n(1), 10_000, 0)).toBe('recorded');
    expect(g.record(n(2), 20_000, 0)).toBe('recorded');
    expect(g.record(n(3), 30_000, 0)).toBe('recorded');
    expect(g.record(n(4), 30_000, 5_000)).toBe('full');
    expect(g.has(n(4))).toBe(false);
    expect(g.has(n(1))).toBe(true); // nothing forgotten early
    expect(g.record(n(4), 30_000, 10_000)).toBe('recorded'); // n(1) expired at 10 s
    expect(g.has(n(1))).toBe(false);
    expect(g.record(n(5), 30_000, 10_000)).toBe('full');
  });

  it('a replay is still refused as replay when full', () => {
    const g = new NonceGuard({ capacity: 1 });
    g.record(n(1), 10_000, 0);
    expect(g.record(n(1), 10_000, 1)).toBe('replay');
  });

  it('prunes in expiry order, whatever the insertion order', () => {
    const g = new NonceGuard({ skewMs: 0 });
    const expiries = [50_000, 10_000, 40_000, 20_000, 30_000];
    for (const [i, e] of expiries.entries()) g.record(n(i), e, 0);
    expect(g.prune(25_000)).toBe(2);
    expect(g.has(n(1)) || g.has(n(3))).toBe(false);
    expect(g.size).toBe(3);
    expect(g.prune(100_000)).toBe(3);
    expect(g.size).toBe(0);
  });

  it('refuses bad options and bad times', () => {
    expect(() => new NonceGuard({ capacity: 0 })).toThrow(RangeError);
    expect(() => new NonceGuard({ skewMs: -1 })).toThrow(RangeError);
    expect(() => new NonceGuard().record(n(1), Number.NaN, 0)).toThrow(TypeError);
  });

  it('handles many nonces quickly (amortised O(1))', () => {
    const g = new NonceGuard({ capacity: 100_000, skewMs: 30_000 });
    const start = performance.now();
    let recorded = 0;
    for (let i = 0; i < 100_000; i++) {
      const now = i * 5; // 200 per second, each living 300 s
      if (g.record(n(i), now + 300_000, now) === 'recorded') recorded++;
    }
    expect(recorded).toBe(100_000);
    expect(g.size).toBeLessThan(70_000);
    expect(g.size).toBeGreaterThan(60_000);
    expect(performance.now() - start).toBeLessThan(10_000); // generous: catches O(n) per record, not a slow machine
  });

  it('agrees with a naive model (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 5_000 }), fc.nat(2_000)),
          {
            maxLength: 200,
          },
        ),
        fc.integer({ min: 1, max: 10 }),
        (ops, capacity) => {
          const g = new NonceGuard({ capacity, skewMs: 0 });
          const model = new Map<string, number>(); // nonce -> forget time
          let now = 0;
          for (const [id, life, step] of ops) {
            now += step;
            for (const [k, t] of model) if (t <= now) model.delete(k);
            const nonce = n(id);
            const expected = model.has(nonce) ? 'replay' : model.size >= capacity ? 'full' : 'recorded';
            if (expected === 'recorded') model.set(nonce, Math.ceil((now + life) / 1000) * 1000);
            expect(g.record(nonce, now + life, now)).toBe(expected);
            expect(g.size).toBe(model.size);
          }
        },
      ),
    );
  });
});

describe('MinHeap', () => {
  it('pops in ascending order (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), (values) => {
        const h = new MinHeap();
        for (const v of values) h.push(v);
        expect(h.size).toBe(values.length);
        const out: number[] = [];
        for (let v = h.pop(); v !== undefined; v = h.pop()) out.push(v);
        expect(out).toEqual([...values].sort((a, b) => a - b));
        expect(h.peek()).toBeUndefined();
      }),
    );
  });
});
