import { isIdentifier } from '@heddle/chain';
import { describe, expect, it } from 'vitest';
import { ChainKind, ChainSource } from './chain-event.js';

describe('chain event names', () => {
  it('are the well-known sources and kinds', () => {
    expect(Object.values(ChainSource)).toEqual([
      'workload',
      'workload.placement',
      'workload.host',
      'workload.runtime',
    ]);
    expect(Object.values(ChainKind)).toEqual([
      'workload.install',
      'workload.place',
      'workload.load',
      'workload.start',
      'workload.stop',
      'workload.unload',
      'workload.migrate',
      'workload.refuse',
      'workload.revoke',
      'workload.lifecycle',
      'workload.job',
      'artifact.fetch',
      'artifact.piece_rejected',
      'artifact.serve',
    ]);
  });

  it('are identifiers the chain accepts, and frozen', () => {
    for (const name of [...Object.values(ChainSource), ...Object.values(ChainKind)]) {
      expect(isIdentifier(name)).toBe(true);
    }
    expect(Object.isFrozen(ChainSource)).toBe(true);
    expect(Object.isFrozen(ChainKind)).toBe(true);
  });
});
