import { describe, expect, it } from 'vitest';
import { LivenessTracker, livenessAt } from './liveness.js';

describe('liveness', () => {
  it('follows contact, failure and silence', () => {
    const t = new LivenessTracker({ suspectAfterMs: 10, deadAfterMs: 30 });
    expect(t.get('a', 0)).toBe('unknown');
    t.contact('a', 100);
    expect(t.get('a', 105)).toBe('alive');
    expect(t.get('a', 110)).toBe('suspect');
    expect(t.get('a', 130)).toBe('dead');
    t.contact('a', 200);
    t.failure('a', 201);
    expect(t.get('a', 202)).toBe('suspect');
    t.failure('a', 220); // the first failure counts
    expect(t.get('a', 231)).toBe('dead');
    t.contact('a', 232);
    expect(t.get('a', 232)).toBe('alive');
    t.override('a', 'dead');
    expect(t.get('a', 232)).toBe('dead');
    t.override('a', undefined);
    expect(t.get('a', 232)).toBe('alive');
    t.failure('b', 0);
    expect(t.get('b', 1)).toBe('unknown');
    expect(t.get('b', 30)).toBe('dead');
    t.forget('a');
    expect(t.get('a', 232)).toBe('unknown');
  });

  it('has a pure rule', () => {
    expect(livenessAt(-1, -1, 0, 1, 2)).toBe('unknown');
    expect(livenessAt(0, -1, 0, 1, 2)).toBe('alive');
    expect(livenessAt(0, 1, 2, 1, 2)).toBe('suspect');
    expect(livenessAt(0, 1, 3, 1, 2)).toBe('dead');
    expect(() => new LivenessTracker({ suspectAfterMs: 5, deadAfterMs: 1 })).toThrow(RangeError);
  });
});
