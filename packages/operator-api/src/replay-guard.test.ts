import { describe, expect, it } from 'vitest';
import { ReplayGuard } from './replay-guard.js';

const codeOf = (f: () => void): string | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

describe('ReplayGuard', () => {
  it('refuses a timestamp beyond the skew either way', () => {
    let now = 1_000_000;
    const g = new ReplayGuard({ skewMs: 60_000, now: () => now });
    expect(codeOf(() => g.checkTime(now - 60_000))).toBeUndefined();
    expect(codeOf(() => g.checkTime(now + 60_000))).toBeUndefined();
    expect(codeOf(() => g.checkTime(now - 60_001))).toBe('stale_request');
    expect(codeOf(() => g.checkTime(now + 60_001))).toBe('stale_request');
    now += 1;
  });

  it('refuses a nonce seen within the window, per key; a replay after the window is stale', () => {
    let now = 1_000_000;
    const g = new ReplayGuard({ skewMs: 60_000, now: () => now });
    g.remember('k1', 'n1', now);
    expect(codeOf(() => g.remember('k1', 'n1', now))).toBe('replayed_request');
    expect(codeOf(() => g.remember('k2', 'n1', now))).toBeUndefined();
    const ts = now;
    now += 60_000;
    expect(codeOf(() => g.remember('k1', 'n1', ts))).toBe('replayed_request');
    now += 1;
    expect(codeOf(() => g.remember('k1', 'n1', ts))).toBe('stale_request');
    g.remember('k3', 'n3', now);
    expect(g.size).toBe(1);
  });

  it('is bounded: when full, refuses with busy instead of forgetting', () => {
    const now = 1_000_000;
    const g = new ReplayGuard({ maxNonces: 2, now: () => now });
    g.remember('k', 'a', now);
    g.remember('k', 'b', now);
    expect(codeOf(() => g.remember('k', 'c', now))).toBe('busy');
    expect(codeOf(() => g.remember('k', 'a', now))).toBe('replayed_request');
  });
});
