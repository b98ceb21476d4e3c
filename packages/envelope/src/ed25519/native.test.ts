// The native backend's key-object caches, and backend selection.
import { describe, expect, it } from 'vitest';
import { toHex } from '../bytes.js';
import type { Ed25519Backend } from './backend.js';
import { nodeBackend } from './native.js';
import { nobleBackend } from './noble.js';
import { getEd25519Backend, publicKeyFromSecret, setEd25519Backend, sign, verify } from './sign.js';

function seedOf(i: number): Uint8Array {
  const s = new Uint8Array(32);
  new DataView(s.buffer).setUint32(0, i);
  s[31] = 0x5a;
  return s;
}

describe('native backend caches', () => {
  it('are keyed by content: a reused, overwritten buffer is a new key', () => {
    const msg = new TextEncoder().encode('cache');
    const buf = new Uint8Array(32);
    buf.set(seedOf(1));
    const sig1 = sign(buf, msg, nodeBackend);
    const pk1 = publicKeyFromSecret(buf, nodeBackend);
    buf.set(seedOf(2)); // same object, different secret key
    const sig2 = sign(buf, msg, nodeBackend);
    const pk2 = publicKeyFromSecret(buf, nodeBackend);
    expect(toHex(pk2)).not.toBe(toHex(pk1));
    expect(toHex(sig2)).toBe(toHex(nobleBackend.sign(seedOf(2), msg)));
    expect(toHex(pk2)).toBe(toHex(nobleBackend.publicKeyFromSecret(seedOf(2))));

    const pkBuf = Uint8Array.from(pk1);
    expect(verify(pkBuf, msg, sig1, nodeBackend)).toBe(true);
    pkBuf.set(pk2); // same object, different public key
    expect(verify(pkBuf, msg, sig1, nodeBackend)).toBe(false);
    expect(verify(pkBuf, msg, sig2, nodeBackend)).toBe(true);
  });

  it('keep working past their size limits (eviction)', () => {
    const msg = new TextEncoder().encode('eviction');
    const keys = Array.from({ length: 1100 }, (_, i) => {
      const sk = seedOf(i + 10);
      const pk = publicKeyFromSecret(sk, nodeBackend);
      return { sk, pk, sig: sign(sk, msg, nodeBackend) };
    });
    for (const { pk, sig } of keys) expect(verify(pk, msg, sig, nodeBackend)).toBe(true);
    // The first ones were evicted from the public key cache; they must still verify, and still refuse.
    for (const { pk, sig } of keys.slice(0, 20)) {
      expect(verify(pk, msg, sig, nodeBackend)).toBe(true);
      expect(verify(pk, new Uint8Array(1), sig, nodeBackend)).toBe(false);
    }
    const first = keys[0];
    expect(first && toHex(sign(first.sk, msg, nodeBackend))).toBe(first && toHex(first.sig));
  });

  it('an off-curve public key stays refused when asked again (negative cache)', () => {
    // y = 2 is not on the curve: (y^2 - 1)/(d y^2 + 1) is not a square.
    const offCurve = new Uint8Array(32);
    offCurve[0] = 2;
    const sig = new Uint8Array(64);
    for (let i = 0; i < 3; i++) {
      expect(verify(offCurve, new Uint8Array(0), sig, nodeBackend)).toBe(false);
      expect(verify(offCurve, new Uint8Array(0), sig, nobleBackend)).toBe(false);
    }
  });

  it('signatures are fresh arrays, not shared or cached buffers', () => {
    const msg = new Uint8Array(3);
    const a = sign(seedOf(7), msg, nodeBackend);
    const copy = toHex(a);
    a.fill(0);
    expect(toHex(sign(seedOf(7), msg, nodeBackend))).toBe(copy);
    const pk = publicKeyFromSecret(seedOf(7), nodeBackend);
    pk.fill(0);
    expect(toHex(publicKeyFromSecret(seedOf(7), nodeBackend))).not.toBe(toHex(pk));
  });
});

describe('backend selection', () => {
  it('setEd25519Backend routes sign, verify and publicKeyFromSecret', () => {
    const calls: string[] = [];
    const spy: Ed25519Backend = {
      name: 'spy',
      publicKeyFromSecret(sk) {
        calls.push('pk');
        return nobleBackend.publicKeyFromSecret(sk);
      },
      sign(sk, m) {
        calls.push('sign');
        return nobleBackend.sign(sk, m);
      },
      verify(a, m, s) {
        calls.push('verify');
        return nobleBackend.verify(a, m, s);
      },
    };
    const before = getEd25519Backend();
    try {
      setEd25519Backend(spy);
      expect(getEd25519Backend()).toBe(spy);
      const sk = seedOf(3);
      const pk = publicKeyFromSecret(sk);
      const sig = sign(sk, new Uint8Array(1));
      expect(verify(pk, new Uint8Array(1), sig)).toBe(true);
      expect(calls).toEqual(['pk', 'sign', 'verify']);
      // An explicit backend argument wins over the default.
      expect(verify(pk, new Uint8Array(1), sig, nodeBackend)).toBe(true);
      expect(calls).toHaveLength(3);
      // Argument checks happen before the backend is reached.
      expect(() => verify(pk.subarray(1), new Uint8Array(1), sig)).toThrow(TypeError);
      expect(calls).toHaveLength(3);
    } finally {
      setEd25519Backend(before);
    }
    expect(getEd25519Backend()).toBe(nodeBackend);
  });
});
