import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clockOffset, hostClockFromReason, hostClockSuffix } from './host-clock.js';

describe('the host clock of a time-window refusal', () => {
  it('reads back the suffix a host writes, at the end of any reason', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (text, now) => {
        expect(hostClockFromReason(`${text} ${hostClockSuffix(now)}`)).toBe(now);
      }),
    );
    expect(hostClockSuffix(1_767_225_555_000)).toBe('[host_clock_ms=1767225555000]');
  });

  it('gives no reading for a reason without it, or with junk in it', () => {
    for (const r of [
      'request expired 5 ms ago (expires_at_ms)',
      '[host_clock_ms=12] and more',
      '[host_clock_ms=-5]',
      '[host_clock_ms=1.5]',
      '[host_clock_ms=99999999999999999]',
      '',
    ])
      expect(hostClockFromReason(r)).toBeNull();
  });
});

describe('clockOffset', () => {
  it('is the host reading minus the midpoint of the round trip, to within half of it', () => {
    expect(clockOffset(10_000, 1_000, 1_100)).toEqual({ offset_ms: 8_950, error_ms: 50 });
    expect(clockOffset(1_000, 46_000, 46_004)).toEqual({ offset_ms: -45_002, error_ms: 2 });
    expect(clockOffset(5, 10, 9)).toBeUndefined();
  });

  it('the true offset lies within the error bound whenever the host read its clock inside the round trip', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: -1e6, max: 1e6 }),
        (sent, rtt, at, trueOffset) => {
          const host = Math.round(sent + rtt * at) + trueOffset;
          const c = clockOffset(host, sent, sent + rtt);
          expect(c).toBeDefined();
          expect(Math.abs((c?.offset_ms ?? 0) - trueOffset)).toBeLessThanOrEqual((c?.error_ms ?? 0) + 1);
        },
      ),
    );
  });
});
