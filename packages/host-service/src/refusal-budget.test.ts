import { describe, expect, it } from 'vitest';
import { DEFAULT_REFUSAL_WINDOW_MS, DEFAULT_REFUSALS_PER_WINDOW, RefusalBudget } from './refusal-budget.js';

/** Takes `n` units at `now`, returning what each take answered. */
function takeN(budget: RefusalBudget, n: number, now: number): (number | undefined)[] {
  return Array.from({ length: n }, () => budget.take(now));
}

describe('RefusalBudget', () => {
  it('chains perWindow refusals per window, then counts the rest as suppressed', () => {
    const budget = new RefusalBudget({ perWindow: 3, windowMs: 1000 });
    expect(takeN(budget, 3, 10_000)).toEqual([0, 0, 0]);
    expect(budget.suppressed).toBe(0);
    expect(takeN(budget, 4, 10_500)).toEqual([undefined, undefined, undefined, undefined]);
    expect(budget.suppressed).toBe(4);
  });

  it('carries the suppressed count on the next chained refusal and then resets it', () => {
    const budget = new RefusalBudget({ perWindow: 1, windowMs: 1000 });
    expect(budget.take(0)).toBe(0);
    expect(budget.take(1)).toBeUndefined();
    expect(budget.take(2)).toBeUndefined();
    expect(budget.suppressed).toBe(2);
    expect(budget.take(1000)).toBe(2);
    expect(budget.suppressed).toBe(0);
    expect(budget.take(1001)).toBeUndefined();
    expect(budget.take(2000)).toBe(1);
  });

  it('starts a new window at the first refusal after the previous window ended', () => {
    const budget = new RefusalBudget({ perWindow: 2, windowMs: 1000 });
    expect(takeN(budget, 2, 100)).toEqual([0, 0]);
    expect(budget.take(1099)).toBeUndefined();
    // 1100 - 100 >= 1000: a new window starting at 1100.
    expect(budget.take(1100)).toBe(1);
    expect(budget.take(2099)).toBe(0);
    expect(budget.take(2099)).toBeUndefined();
    expect(budget.take(2100)).toBe(1);
  });

  it('the window is fixed from its first refusal, not sliding with each take', () => {
    const budget = new RefusalBudget({ perWindow: 1, windowMs: 1000 });
    expect(budget.take(0)).toBe(0);
    expect(budget.take(999)).toBeUndefined();
    expect(budget.take(1000)).toBe(1);
  });

  it('resets the window when the clock goes backwards', () => {
    const budget = new RefusalBudget({ perWindow: 2, windowMs: 1000 });
    expect(takeN(budget, 2, 50_000)).toEqual([0, 0]);
    expect(budget.take(50_001)).toBeUndefined();
    expect(budget.take(40_000)).toBe(1);
    expect(budget.take(40_000)).toBe(0);
    expect(budget.take(40_001)).toBeUndefined();
  });

  it('defaults to 16 per minute', () => {
    expect(DEFAULT_REFUSALS_PER_WINDOW).toBe(16);
    expect(DEFAULT_REFUSAL_WINDOW_MS).toBe(60_000);
    const budget = new RefusalBudget();
    expect(takeN(budget, 16, 0).every((v) => v === 0)).toBe(true);
    expect(budget.take(59_999)).toBeUndefined();
    expect(budget.take(60_000)).toBe(1);
  });

  it.each([
    [{ perWindow: 0 }, /perWindow/],
    [{ perWindow: -1 }, /perWindow/],
    [{ perWindow: 1.5 }, /perWindow/],
    [{ perWindow: Number.NaN }, /perWindow/],
    [{ perWindow: Number.POSITIVE_INFINITY }, /perWindow/],
    [{ windowMs: 0 }, /windowMs/],
    [{ windowMs: -5 }, /windowMs/],
    [{ windowMs: 0.5 }, /windowMs/],
    [{ windowMs: Number.MAX_SAFE_INTEGER + 1 }, /windowMs/],
  ])('refuses the options %o with a TypeError', (options, message) => {
    expect(() => new RefusalBudget(options)).toThrow(TypeError);
    expect(() => new RefusalBudget(options)).toThrow(message);
  });

  it('accepts the smallest valid options', () => {
    const budget = new RefusalBudget({ perWindow: 1, windowMs: 1 });
    expect(budget.take(0)).toBe(0);
    expect(budget.take(0)).toBeUndefined();
    expect(budget.take(1)).toBe(1);
  });
});
