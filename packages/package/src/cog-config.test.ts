import { describe, expect, it } from 'vitest';
import { type CogConfigSchema, validateCogConfig } from './cog-config.js';

const schema: CogConfigSchema = {
  rate: { type: 'integer', min: 1, max: 10, default: 2 },
  name: { type: 'string', max_length: 4, required: true },
  mode: { type: 'enum', values: ['a', 'b'] },
  on: { type: 'boolean', default: false },
};

describe('validateCogConfig', () => {
  it('fills defaults and keeps valid values', () => {
    expect(validateCogConfig(schema, { name: 'abc', mode: 'b' })).toEqual({
      rate: 2,
      name: 'abc',
      mode: 'b',
      on: false,
    });
  });

  it('refuses unknown, missing, mistyped and out-of-bounds values, naming the field', () => {
    const bad: Array<[unknown, string]> = [
      [{ name: 'a', extra: 1 }, 'config.extra'],
      [{}, 'config.name'],
      [{ name: 'a', rate: 11 }, 'config.rate'],
      [{ name: 'a', rate: 0 }, 'config.rate'],
      [{ name: 'a', rate: 1.5 }, 'config.rate'],
      [{ name: 'toolong' }, 'config.name'],
      [{ name: 'a', mode: 'c' }, 'config.mode'],
      [{ name: 'a', on: 'yes' }, 'config.on'],
      [[], 'config'],
    ];
    for (const [value, field] of bad) {
      expect(() => validateCogConfig(schema, value), field).toThrow(
        expect.objectContaining({ code: 'config_invalid', field }),
      );
    }
  });
});
