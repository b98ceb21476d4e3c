import { describe, expect, it } from 'vitest';
import { isNetworkLevel, isNodeTier, NETWORK_LEVELS, NODE_TIERS, networkRank, tierRank } from './tier.js';

describe('node tiers and network levels', () => {
  it('are ordered least trusted (or exposed) first', () => {
    expect(NODE_TIERS).toEqual(['discovered', 'paired', 'pinned']);
    expect(NODE_TIERS.map(tierRank)).toEqual([0, 1, 2]);
    expect(NETWORK_LEVELS).toEqual(['none', 'lan', 'egress']);
    expect(NETWORK_LEVELS.map(networkRank)).toEqual([0, 1, 2]);
  });

  it('the guards accept the listed values only', () => {
    expect(NODE_TIERS.every(isNodeTier)).toBe(true);
    expect(NETWORK_LEVELS.every(isNetworkLevel)).toBe(true);
    for (const junk of ['', 'Pinned', 'wan', 'toString', '__proto__', 0, null, undefined, ['none']]) {
      expect(isNodeTier(junk)).toBe(false);
      expect(isNetworkLevel(junk)).toBe(false);
    }
  });
});
