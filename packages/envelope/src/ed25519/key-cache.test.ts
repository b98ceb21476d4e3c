// The verification key cache follows the fleet: with 2,048 peers verified round-robin, a cache of the
// default 1,024 keys misses on every verification (each rebuilds its key object); grown to the peers,
// every key stays held.
import { describe, expect, it } from 'vitest';
import { keyPairFromSecret } from '../keys.js';
import {
  growVerifyKeyCache,
  nodeBackend,
  VERIFY_KEY_CACHE_DEFAULT,
  VERIFY_KEY_CACHE_MAX,
  verifyKeyCacheCapacity,
} from './native.js';

describe('growVerifyKeyCache', () => {
  it('grows the cache to the peers (never shrinking, at most the maximum) and verification stays correct', () => {
    expect(verifyKeyCacheCapacity()).toBeGreaterThanOrEqual(VERIFY_KEY_CACHE_DEFAULT);
    expect(growVerifyKeyCache(10)).toBeGreaterThanOrEqual(VERIFY_KEY_CACHE_DEFAULT);
    expect(growVerifyKeyCache(2048)).toBe(Math.max(2048, verifyKeyCacheCapacity()));
    expect(growVerifyKeyCache(100)).toBeGreaterThanOrEqual(2048);
    expect(growVerifyKeyCache(VERIFY_KEY_CACHE_MAX * 4)).toBe(VERIFY_KEY_CACHE_MAX);
    expect(() => growVerifyKeyCache(-1)).toThrow(RangeError);
    const msg = new Uint8Array([1, 2, 3]);
    for (let i = 0; i < 4; i++) {
      const k = keyPairFromSecret(new Uint8Array(32).fill(i + 1));
      const sig = nodeBackend.sign(k.secretKey, msg);
      expect(nodeBackend.verify(k.publicKey, msg, sig)).toBe(true);
      expect(nodeBackend.verify(k.publicKey, new Uint8Array([9]), sig)).toBe(false);
    }
  });
});
