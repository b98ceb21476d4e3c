import {
  canonicalJson,
  DomainTag,
  generateKeyPair,
  nodeIdFromPublicKey,
  signWithDomain,
  toHex,
  utf8,
} from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import { PlacementError } from './errors.js';
import { type NodeFacts, signNodeFacts, verifyNodeFacts } from './facts.js';
import { NodeFactsCache } from './facts-cache.js';

const T0 = 1_700_000_000_000;

function keyed() {
  const kp = generateKeyPair();
  const id = nodeIdFromPublicKey(kp.publicKey);
  const facts = (seq: number, more: Partial<NodeFacts> = {}): NodeFacts => ({
    node_id: id,
    issued_at_ms: T0,
    ttl_ms: 60_000,
    seq,
    capabilities: [
      {
        id: 'cpu.arch.aarch64',
        attrs: { cores: 4 },
        provenance: 'probed',
        state: 'available',
        exclusive: false,
      },
      { id: 'perf.cpu', attrs: { score: 800 }, provenance: 'measured', state: 'available', exclusive: false },
    ],
    ...more,
  });
  return {
    kp,
    id,
    facts,
    sign: (seq: number, more?: Partial<NodeFacts>) => signNodeFacts(facts(seq, more), kp.secretKey),
  };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(PlacementError);
    return (e as PlacementError).code;
  }
  throw new Error('did not throw');
}

describe('signed node facts', () => {
  it('round-trips and binds the node id to the key', () => {
    const n = keyed();
    const s = n.sign(1);
    const v = verifyNodeFacts(s);
    expect(v.facts.node_id).toBe(n.id);
    expect(v.public_key).toBe(toHex(n.kp.publicKey));
    expect(JSON.parse(s.payload).seq).toBe(1);
  });

  it('refuses a tampered payload, a forged signature and another key', () => {
    const n = keyed();
    const s = n.sign(1);
    expect(code(() => verifyNodeFacts({ ...s, payload: s.payload.replace('"seq":1', '"seq":9') }))).toBe(
      'facts_signature',
    );
    const sig = s.signature.slice(0, -2) + (s.signature.endsWith('00') ? '01' : '00');
    expect(code(() => verifyNodeFacts({ ...s, signature: sig }))).toBe('facts_signature');
    const other = keyed();
    // Signed validly by another key, but naming this node: refused.
    expect(code(() => signNodeFacts(n.facts(1), other.kp.secretKey))).toBe('facts_wrong_key');
    expect(code(() => verifyNodeFacts(s, toHex(other.kp.publicKey)))).toBe('facts_wrong_key');
  });

  it('refuses a self-asserted tier and junk, naming the field', () => {
    const n = keyed();
    expect(code(() => signNodeFacts({ ...n.facts(1), tier: 'pinned' } as NodeFacts, n.kp.secretKey))).toBe(
      'self_asserted_tier',
    );
    expect(code(() => verifyNodeFacts({ payload: 'x', public_key: 'zz', signature: '00' }))).toBe(
      'invalid_facts',
    );
    try {
      signNodeFacts({ ...n.facts(1), ttl_ms: 0 }, n.kp.secretKey);
      expect.unreachable();
    } catch (e) {
      expect((e as PlacementError).field).toBe('ttl_ms');
    }
    try {
      signNodeFacts(n.facts(1, { capabilities: [{ id: 'BAD' } as never] }), n.kp.secretKey);
      expect.unreachable();
    } catch (e) {
      expect((e as PlacementError).field).toBe('capabilities[0].id');
    }
  });
});

describe('NodeFactsCache', () => {
  it('accepts only higher sequence numbers', () => {
    const n = keyed();
    const c = new NodeFactsCache();
    c.insert(n.sign(5), { now_ms: T0, tier: 'paired' });
    expect(code(() => c.insert(n.sign(5), { now_ms: T0 }))).toBe('facts_stale');
    expect(code(() => c.insert(n.sign(4), { now_ms: T0 }))).toBe('facts_stale');
    expect(c.insert(n.sign(6), { now_ms: T0 }).seq).toBe(6);
    expect(c.get(n.id)?.tier).toBe('paired');
  });

  it('remembers the highest seq after remove, prune and eviction: an older unexpired message stays stale', () => {
    const n = keyed();
    const c = new NodeFactsCache();
    const old = n.sign(3); // captured by an attacker, still unexpired
    c.insert(n.sign(7), { now_ms: T0 });
    expect(c.remove(n.id)).toBe(true);
    expect(c.get(n.id)).toBeUndefined();
    expect(code(() => c.insert(old, { now_ms: T0 }))).toBe('facts_stale');
    expect(code(() => c.insert(n.sign(7), { now_ms: T0 }))).toBe('facts_stale');
    expect(c.highestSeq(n.id)).toBe(7);
    expect(c.insert(n.sign(8), { now_ms: T0 }).seq).toBe(8);
    // Pruned (expired) entries keep their high-water mark too.
    const p = keyed();
    c.insert(p.sign(5, { ttl_ms: 1000 }), { now_ms: T0 });
    expect(c.prune(T0 + 1000)).toBe(1);
    expect(code(() => c.insert(p.sign(4, { issued_at_ms: T0 + 500 }), { now_ms: T0 + 1000 }))).toBe(
      'facts_stale',
    );
    // An evicted entry too.
    const small = new NodeFactsCache({ maxNodes: 2 });
    const a = keyed();
    small.insert(a.sign(9, { ttl_ms: 1000 }), { now_ms: T0 });
    small.insert(keyed().sign(1), { now_ms: T0 });
    small.insert(keyed().sign(1), { now_ms: T0 + 1000 }); // evicts a (expired)
    expect(small.get(a.id)).toBeUndefined();
    expect(code(() => small.insert(a.sign(2, { issued_at_ms: T0 + 1000 }), { now_ms: T0 + 1000 }))).toBe(
      'facts_stale',
    );
    // The operator may forget it on purpose (a re-installed node whose counter restarted).
    c.remove(n.id, { forgetSeq: true });
    expect(c.insert(n.sign(1), { now_ms: T0 }).seq).toBe(1);
  });

  it('bounds the remembered sequence numbers to maxNodes ids, least recently updated dropped', () => {
    const c = new NodeFactsCache({ maxNodes: 3 });
    const nodes = Array.from({ length: 4 }, () => keyed());
    for (const n of nodes) {
      c.insert(n.sign(5), { now_ms: T0 });
      c.remove(n.id);
    }
    // The first node's mark was dropped (4 ids > 3); the others are remembered.
    expect(c.highestSeq(nodes[0]!.id)).toBeUndefined();
    for (const n of nodes.slice(1)) expect(c.highestSeq(n.id)).toBe(5);
    expect(c.insert(nodes[0]!.sign(1), { now_ms: T0 }).seq).toBe(1);
  });

  it('refuses expired facts and facts from the future, and keeps expiry', () => {
    const n = keyed();
    const c = new NodeFactsCache();
    expect(code(() => c.insert(n.sign(1), { now_ms: T0 + 60_000 }))).toBe('facts_expired');
    expect(code(() => c.insert(n.sign(1, { issued_at_ms: T0 + 31_000 }), { now_ms: T0 }))).toBe(
      'facts_from_future',
    );
    const e = c.insert(n.sign(1), { now_ms: T0 + 59_999 });
    expect(e.expires_at_ms).toBe(T0 + 60_000);
    expect(c.prune(T0 + 59_999)).toBe(0);
    expect(c.prune(T0 + 60_000)).toBe(1);
    expect(c.size).toBe(0);
  });

  it('binds a node to its first key and to the expected key', () => {
    const n = keyed();
    const c = new NodeFactsCache();
    expect(code(() => c.insert(n.sign(1), { now_ms: T0, expectedKey: toHex(keyed().kp.publicKey) }))).toBe(
      'facts_wrong_key',
    );
    c.insert(n.sign(1), { now_ms: T0, expectedKey: toHex(n.kp.publicKey) });
    expect(c.get(n.id)?.public_key).toBe(toHex(n.kp.publicKey));
  });

  it('holds the operator tier, never a self-claimed one, and caps remote provenance by tier', () => {
    const n = keyed();
    const c = new NodeFactsCache();
    // Validly signed facts that claim a tier are refused: only the operator assigns one.
    const payload = canonicalJson({ ...n.facts(1), tier: 'pinned' });
    const sig = signWithDomain(DomainTag.nodeFacts, n.kp.secretKey, utf8(payload));
    const forged = { payload, public_key: toHex(n.kp.publicKey), signature: toHex(sig) };
    expect(code(() => c.insert(forged, { now_ms: T0, tier: 'paired' }))).toBe('self_asserted_tier');
    expect(c.size).toBe(0);
    const e = c.insert(n.sign(1), { now_ms: T0 });
    expect(e.tier).toBe('discovered');
    expect(e.capabilities.map((x) => x.provenance)).toEqual(['claimed', 'claimed']);
    c.setTier(n.id, 'paired');
    expect(c.get(n.id)?.capabilities.map((x) => x.provenance)).toEqual(['probed', 'probed']);
    c.setTier(n.id, 'pinned');
    expect(c.get(n.id)?.capabilities.map((x) => x.provenance)).toEqual(['probed', 'measured']);
    // New facts keep the held tier unless the operator gives one.
    expect(c.insert(n.sign(2), { now_ms: T0 }).tier).toBe('pinned');
    const local = new NodeFactsCache({ provenanceCap: { pinned: 'claimed' } });
    expect(
      local.insert(n.sign(1), { now_ms: T0, tier: 'pinned', local: true }).capabilities[1]?.provenance,
    ).toBe('measured');
    expect(code(() => c.setTier('0'.repeat(32), 'paired'))).toBe('unknown_node');
  });

  it('is bounded: evicts an expired entry, otherwise fails closed', () => {
    const c = new NodeFactsCache({ maxNodes: 2 });
    const a = keyed();
    const b = keyed();
    const d = keyed();
    c.insert(a.sign(1, { ttl_ms: 1000 }), { now_ms: T0 });
    c.insert(b.sign(1), { now_ms: T0 });
    expect(code(() => c.insert(d.sign(1), { now_ms: T0 + 500 }))).toBe('facts_cache_full');
    c.insert(d.sign(1), { now_ms: T0 + 1000 });
    expect(c.get(a.id)).toBeUndefined();
    expect(c.size).toBe(2);
    // A known node still updates when the cache is full.
    expect(c.insert(b.sign(2), { now_ms: T0 + 1000 }).seq).toBe(2);
  });
});
