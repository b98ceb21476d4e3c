import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnvelopeError, errnoCode, errorMessage } from './errors.js';

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('errorMessage and errnoCode', () => {
  it('read the message and the system code of what was thrown, whatever it is', () => {
    const enoent = thrown(() => readFileSync(join(import.meta.dirname, 'no-such-file')));
    expect(errnoCode(enoent)).toBe('ENOENT');
    expect(errorMessage(enoent)).toMatch(/ENOENT/);
    const heddle = new EnvelopeError('invalid_json', 'bad');
    expect(errorMessage(heddle)).toBe('bad');
    // Any Error's string code is reported (a HeddleError's too).
    expect(errnoCode(heddle)).toBe('invalid_json');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errnoCode('ENOENT')).toBeUndefined();
    expect(errnoCode({ code: 'ENOENT' })).toBeUndefined();
    expect(errnoCode(Object.assign(new Error('x'), { code: 42 }))).toBeUndefined();
  });
});
