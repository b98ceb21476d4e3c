import { describe, expect, it } from 'vitest';
import { Rng, rerunHint } from './rng.js';

describe('Rng', () => {
  it('replays the same sequence for the same seed, and another for another seed', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const seqA = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(seqA);
    const c = new Rng(43);
    expect(Array.from({ length: 20 }, () => c.next())).not.toEqual(seqA);
    for (const x of seqA) expect(x >= 0 && x < 1).toBe(true);
  });

  it('int stays in range and reaches both ends; pick and chance follow the seed', () => {
    const r = new Rng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 500; i++) {
      const n = r.int(3, 6);
      expect(n >= 3 && n <= 6).toBe(true);
      seen.add(n);
    }
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
    expect(new Rng(1).pick(['a', 'b', 'c'])).toBe(new Rng(1).pick(['a', 'b', 'c']));
    let yes = 0;
    for (let i = 0; i < 1000; i++) if (r.chance(0.25)) yes++;
    expect(yes).toBeGreaterThan(180);
    expect(yes).toBeLessThan(320);
    expect(() => r.int(5, 4)).toThrow(RangeError);
    expect(() => r.pick([])).toThrow(RangeError);
  });

  it('fork gives an independent but reproducible generator; the hint names the seed', () => {
    const a = new Rng(9).fork();
    const b = new Rng(9).fork();
    expect(a.next()).toBe(b.next());
    expect(rerunHint(123)).toBe('HEDDLE_FAULT_SEED=123 npx vitest run apps/faults');
  });
});
