import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANE_CONFIG, type PlaneConfig, planeConfig } from './config.js';

describe('planeConfig', () => {
  it('defaults to the original tunables, frozen', () => {
    const c = planeConfig();
    expect(c).toEqual({
      callTimeoutMs: 20_000,
      healthTimeoutMs: 5_000,
      healthConcurrency: 16,
      placeTimeoutMs: 280_000,
      requestTtlMs: 290_000,
      suspectAfterMs: 15_000,
      deadAfterMs: 30_000,
      reconcileTimeoutMs: 30_000,
      maxAttempts: 8,
      clockSkewMs: 30_000,
      clockSkewWarnMs: 10_000,
      rescheduleTimeoutMs: 60_000,
      rescheduleBackoffMs: 10_000,
      rescheduleBackoffMaxMs: 300_000,
      maxReschedules: 5,
      maxHostSessions: 4096,
      hostSessionIdleMs: 10_000,
    });
    expect(c).toEqual(DEFAULT_PLANE_CONFIG);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(DEFAULT_PLANE_CONFIG)).toBe(true);
  });

  it('applies overrides and keeps the other defaults', () => {
    const c = planeConfig({ callTimeoutMs: 1, maxAttempts: 1, requestTtlMs: 300_000 });
    expect(c).toMatchObject({
      callTimeoutMs: 1,
      maxAttempts: 1,
      requestTtlMs: 300_000,
      placeTimeoutMs: 280_000,
    });
    expect(planeConfig({ suspectAfterMs: 30_000 }).suspectAfterMs).toBe(30_000); // equal to dead is fine
    expect(DEFAULT_PLANE_CONFIG.callTimeoutMs).toBe(20_000);
  });

  const keys = Object.keys(DEFAULT_PLANE_CONFIG) as (keyof PlaneConfig)[];
  it.each(
    keys.flatMap((k) =>
      [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53].map((v) => [k, v] as const),
    ),
  )('refuses %s = %s with a RangeError naming it', (key, value) => {
    expect(() => planeConfig({ [key]: value })).toThrow(RangeError);
    expect(() => planeConfig({ [key]: value })).toThrow(key);
  });

  it('refuses a non-number value', () => {
    expect(() => planeConfig({ maxAttempts: '8' as unknown as number })).toThrow(RangeError);
  });

  it('refuses a request lifetime over 300 s', () => {
    expect(() => planeConfig({ requestTtlMs: 300_001 })).toThrow(/requestTtlMs must be at most 300000/);
  });

  it('refuses suspect after longer than dead after', () => {
    expect(() => planeConfig({ suspectAfterMs: 30_001 })).toThrow(RangeError);
    expect(() => planeConfig({ deadAfterMs: 14_999 })).toThrow(/suspectAfterMs must not exceed deadAfterMs/);
  });
});
