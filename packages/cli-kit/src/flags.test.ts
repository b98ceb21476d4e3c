import { describe, expect, it } from 'vitest';
import { boolFlag, flagOptions, stringFlag, stringsFlag } from './flags.js';

describe('flag helpers', () => {
  it('turns a spec into parseArgs options', () => {
    expect(flagOptions({ json: 'boolean', config: 'string', controller: 'strings' })).toEqual({
      json: { type: 'boolean' },
      config: { type: 'string' },
      controller: { type: 'string', multiple: true },
    });
  });

  it('reads string, repeated and boolean flags', () => {
    const a = { flags: { config: 'c.json', controller: ['a', 'b'], one: 'x', force: true, json: undefined } };
    expect(stringFlag(a, 'config')).toBe('c.json');
    expect(stringFlag(a, 'force')).toBeUndefined();
    expect(stringsFlag(a, 'controller')).toEqual(['a', 'b']);
    expect(stringsFlag(a, 'one')).toEqual(['x']);
    expect(stringsFlag(a, 'none')).toEqual([]);
    expect(boolFlag(a, 'force')).toBe(true);
    expect(boolFlag(a, 'json')).toBe(false);
  });
});
