import { generateKeyPair, toHex } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import {
  type Chain,
  GENESIS_PREV_HASH,
  openMemoryChain,
  parseSignedCheckpoint,
  type SignedCheckpoint,
  signCheckpoint,
  verifyCheckpoint,
  verifyConsistency,
  verifyEvents,
} from './index.js';

async function chainOf(n: number): Promise<Chain> {
  const chain = await openMemoryChain({ clock: () => 1_700_000_000_000 });
  for (let i = 0; i < n; i++) await chain.append('workload', 'workload.start', { i });
  return chain;
}

describe('checkpoints', () => {
  const keys = generateKeyPair();

  it('signs size, root, head, ts, public key and node id; verifies with the public key alone', async () => {
    const chain = await chainOf(9);
    const signed = chain.checkpoint(keys);
    const cp = verifyCheckpoint(signed, keys.publicKey);
    expect(cp).toEqual({
      size: 9,
      root: chain.root(),
      head: chain.head,
      ts: 1_700_000_000_000,
      public_key: toHex(keys.publicKey),
      node_id: cp.node_id,
    });
    expect(cp.node_id).toMatch(/^[0-9a-f]{32}$/);
    expect(chain.checkCheckpoint(cp).ok).toBe(true);
    expect(verifyEvents(chain.range(0), { checkpoint: cp }).ok).toBe(true);
    // A JSON round trip (to a file and back).
    expect(verifyCheckpoint(parseSignedCheckpoint(JSON.stringify(signed)), keys.publicKey)).toEqual(cp);
  });

  it('checkpoints an earlier size, and the empty chain', async () => {
    const chain = await chainOf(9);
    const cp = verifyCheckpoint(chain.checkpoint(keys, 4), keys.publicKey);
    expect(cp).toMatchObject({ size: 4, head: chain.get(3)?.hash, root: chain.root(4) });
    const empty = verifyCheckpoint((await chainOf(0)).checkpoint(keys), keys.publicKey);
    expect(empty).toMatchObject({ size: 0, head: GENESIS_PREV_HASH });
    // The log only grew: a consistency proof from the old checkpoint to the new one.
    const later = verifyCheckpoint(chain.checkpoint(keys), keys.publicKey);
    const p = chain.consistencyProof(cp.size, later.size);
    expect(verifyConsistency(cp.size, later.size, cp.root, later.root, p.path)).toBe(true);
  });

  it('refuses the wrong key', async () => {
    const signed = (await chainOf(3)).checkpoint(keys);
    const other = generateKeyPair();
    expect(() => verifyCheckpoint(signed, other.publicKey)).toThrow(
      expect.objectContaining({ code: 'checkpoint_key_mismatch' }),
    );
    // Signed by another key but naming ours: the signature fails.
    const body = JSON.parse(signed.checkpoint) as Record<string, unknown>;
    const forged = signCheckpoint(body as never, { secretKey: other.secretKey, publicKey: keys.publicKey });
    expect(() => verifyCheckpoint(forged, keys.publicKey)).toThrow(
      expect.objectContaining({ code: 'checkpoint_signature' }),
    );
  });

  it('refuses tampered fields and signatures', async () => {
    const chain = await chainOf(5);
    const signed = chain.checkpoint(keys);
    const tamper = (edit: (c: Record<string, unknown>) => void): SignedCheckpoint => {
      const c = JSON.parse(signed.checkpoint) as Record<string, unknown>;
      edit(c);
      const keysSorted = Object.keys(c).sort();
      const text = `{${keysSorted.map((k) => `${JSON.stringify(k)}:${JSON.stringify(c[k])}`).join(',')}}`;
      return { checkpoint: text, signature: signed.signature };
    };
    for (const edit of [
      (c: Record<string, unknown>) => (c.size = 4),
      (c: Record<string, unknown>) => (c.ts = 1),
      (c: Record<string, unknown>) => (c.root = 'a'.repeat(64)),
      (c: Record<string, unknown>) => (c.head = 'b'.repeat(64)),
    ]) {
      expect(() => verifyCheckpoint(tamper(edit), keys.publicKey)).toThrow(
        expect.objectContaining({ code: 'checkpoint_signature' }),
      );
    }
    expect(() =>
      verifyCheckpoint(
        tamper((c) => (c.node_id = '0'.repeat(32))),
        keys.publicKey,
      ),
    ).toThrow(expect.objectContaining({ code: 'checkpoint_key_mismatch', field: 'node_id' }));
    expect(() =>
      verifyCheckpoint(
        tamper((c) => (c.extra = 1)),
        keys.publicKey,
      ),
    ).toThrow(expect.objectContaining({ code: 'checkpoint_malformed' }));
    expect(() =>
      verifyCheckpoint(
        tamper((c) => (c.size = -1)),
        keys.publicKey,
      ),
    ).toThrow(expect.objectContaining({ code: 'checkpoint_malformed', field: 'size' }));
    const sig = signed.signature;
    const flipped = (sig[0] === '0' ? '1' : '0') + sig.slice(1);
    expect(() => verifyCheckpoint({ ...signed, signature: flipped }, keys.publicKey)).toThrow(
      expect.objectContaining({ code: 'checkpoint_signature' }),
    );
    expect(() =>
      verifyCheckpoint({ ...signed, checkpoint: ` ${signed.checkpoint}` }, keys.publicKey),
    ).toThrow(expect.objectContaining({ code: 'checkpoint_malformed' }));
    expect(() => verifyCheckpoint({ ...signed, signature: 'zz' }, keys.publicKey)).toThrow(
      expect.objectContaining({ code: 'checkpoint_malformed', field: 'signature' }),
    );
    expect(() => parseSignedCheckpoint('{"checkpoint":"x"}')).toThrow(
      expect.objectContaining({ code: 'checkpoint_malformed' }),
    );
    expect(() => parseSignedCheckpoint('not json')).toThrow(
      expect.objectContaining({ code: 'checkpoint_malformed' }),
    );
  });

  it('a valid checkpoint catches a chain that was cut or rewritten', async () => {
    const chain = await chainOf(8);
    const cp = verifyCheckpoint(chain.checkpoint(keys), keys.publicKey);
    expect(verifyEvents(chain.range(0, 6), { checkpoint: cp }).failure?.reason).toBe('truncated');
    const other = await openMemoryChain({ clock: () => 1_700_000_000_000 });
    for (let i = 0; i < 8; i++) await other.append('workload', 'workload.start', { i: i === 2 ? -1 : i });
    expect(other.checkCheckpoint(cp).failure?.reason).toBe('checkpoint_mismatch');
  });
});
