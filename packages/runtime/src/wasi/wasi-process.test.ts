import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRunnerStatuses } from './wasi-process.js';

describe('the runner status lines (fd 3)', () => {
  it('keeps well-formed statuses in order and skips blank, torn and malformed lines', () => {
    const text = [
      '{"event":"started","capPages":4}',
      '',
      '{"event":"exit","code":"3"}',
      '{"event":"bogus"}',
      '5',
      'null',
      '{"event":"trap","message":"unreachable","memoryPages":null}',
      '{"event":"exit","code":0,"memoryPa',
    ].join('\n');
    expect(parseRunnerStatuses(text)).toEqual([
      { event: 'started', capPages: 4 },
      { event: 'trap', message: 'unreachable', memoryPages: null },
    ]);
  });

  it('never throws on junk and returns only known events', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.json())), (lines) => {
        for (const s of parseRunnerStatuses(lines.join('\n'))) {
          expect(['started', 'exit', 'trap', 'error']).toContain(s.event);
        }
      }),
      { numRuns: 300 },
    );
  });
});
