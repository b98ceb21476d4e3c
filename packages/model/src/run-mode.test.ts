import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_INTERVAL_SECS, RUN_MODE_TYPES, RunModeSchema } from './run-mode.js';

describe('RunModeSchema', () => {
  it('accepts once, listener and interval with 1..MAX_INTERVAL_SECS seconds', () => {
    for (const m of [{ type: 'once' }, { type: 'listener' }, { type: 'interval', secs: 1 }]) {
      expect(RunModeSchema.parse(m)).toEqual(m);
    }
    expect(RunModeSchema.parse({ type: 'interval', secs: MAX_INTERVAL_SECS })).toEqual({
      type: 'interval',
      secs: 86_400,
    });
    expect(RUN_MODE_TYPES).toEqual(['once', 'interval', 'listener']);
  });

  it.each([
    [{ type: 'interval', secs: 0 }, ['secs']],
    [{ type: 'interval', secs: MAX_INTERVAL_SECS + 1 }, ['secs']],
    [{ type: 'interval', secs: 1.5 }, ['secs']],
    [{ type: 'interval' }, ['secs']],
    [{ type: 'once', secs: 5 }, []],
    [{ type: 'forever' }, ['type']],
    [{}, ['type']],
  ])('refuses %j, naming the field', (input, path) => {
    const r = RunModeSchema.safeParse(input);
    expect(r.success).toBe(false);
    if (!r.success) expect(r.error.issues[0]?.path).toEqual(path);
  });

  it('never throws on junk, and what it accepts is one of the three shapes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const r = RunModeSchema.safeParse(v);
        if (r.success) expect(RUN_MODE_TYPES).toContain(r.data.type);
      }),
      { numRuns: 300 },
    );
  });
});
