import { describe, expect, it } from 'vitest';
import { CTL_METHODS, isCtlMethod, MUTATING_METHODS, mutates } from './methods.js';
import { isRefusalCode, REFUSAL_CODES, Refusal } from './refusal.js';

describe('methods', () => {
  it('lists the nine methods, six of which mutate', () => {
    expect(CTL_METHODS).toHaveLength(9);
    expect([...MUTATING_METHODS].sort()).toEqual([
      'workload.load',
      'workload.place',
      'workload.revoke',
      'workload.start',
      'workload.stop',
      'workload.unload',
    ]);
    for (const m of ['workload.describe', 'workload.status', 'workload.logs', 'workload.fly', '']) {
      expect(mutates(m)).toBe(false);
    }
    for (const m of MUTATING_METHODS) expect(isCtlMethod(m)).toBe(true);
    expect(isCtlMethod('workload.fly')).toBe(false);
    expect(isCtlMethod(1)).toBe(false);
    expect(Object.isFrozen(CTL_METHODS)).toBe(true);
  });
});

describe('Refusal', () => {
  it('has the fourteen stable codes', () => {
    expect(REFUSAL_CODES).toEqual([
      'signature',
      'expired',
      'replay',
      'not_for_me',
      'unauthorized',
      'unknown_method',
      'invalid_request',
      'governance',
      'admission',
      'fetch',
      'verify',
      'runtime',
      'unknown_instance',
      'no_space',
    ]);
    expect(isRefusalCode('nope')).toBe(false);
  });

  it('carries code, reason, field and the authenticated flag', () => {
    const r = new Refusal('governance', 'no permit for workload.place', {
      authenticated: true,
      field: 'method',
    });
    expect([r.code, r.reason, r.field, r.authenticated, r.name]).toEqual([
      'governance',
      'no permit for workload.place',
      'method',
      true,
      'Refusal',
    ]);
    expect(r.message).toBe('governance: no permit for workload.place');
    expect(new Refusal('runtime', 'x').authenticated).toBe(false);
    // @ts-expect-error: not a refusal code
    expect(() => new Refusal('nope', 'x')).toThrow(TypeError);
  });
});
