import { setTimeout as sleep } from 'node:timers/promises';
import { nodeIdFromPublicKey, toHex } from '@heddle/envelope';
import { type Capability, type NodeFacts, verifyNodeFacts } from '@heddle/placement';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FACTS_TTL_MS, NodeFactsSource } from './facts-source.js';
import { hostKeys, strangerKeys } from './test-fixtures.js';

const cap = (id: string, attrs: Capability['attrs'] = {}): Capability => ({
  id,
  attrs,
  provenance: 'probed',
  state: 'available',
  exclusive: false,
});

/** A probe that counts its calls and answers `caps` (after `delayMs`). */
function countingProbe(caps: readonly Capability[] = [cap('cpu.arch.x86_64')], delayMs = 0) {
  const probe = {
    calls: 0,
    fn: async (): Promise<readonly Capability[]> => {
      probe.calls++;
      if (delayMs > 0) await sleep(delayMs);
      return caps;
    },
  };
  return probe;
}

/** A settable clock. */
function clock(start: number) {
  const c = { t: start, now: (): number => c.t };
  return c;
}

const facts = (signed: unknown): NodeFacts => verifyNodeFacts(signed, toHex(hostKeys.publicKey)).facts;

describe('NodeFactsSource', () => {
  it('signs facts that verify, naming the node id of its key, with the probed capabilities', async () => {
    const probe = countingProbe([cap('cpu.arch.x86_64', { cores: 4 }), cap('runtime.wasi')]);
    const t = clock(1_700_000_000_000);
    const source = new NodeFactsSource({ keys: hostKeys, probe: probe.fn, now: t.now });
    const signed = await source.current();
    const verified = verifyNodeFacts(signed);
    expect(verified.public_key).toBe(toHex(hostKeys.publicKey));
    expect(verified.facts.node_id).toBe(nodeIdFromPublicKey(hostKeys.publicKey));
    expect(verified.facts.issued_at_ms).toBe(t.t);
    expect(verified.facts.ttl_ms).toBe(DEFAULT_FACTS_TTL_MS);
    expect(verified.facts.capabilities.map((c) => c.id)).toEqual(['cpu.arch.x86_64', 'runtime.wasi']);
    expect(verified.facts.capabilities[0]?.attrs).toEqual({ cores: 4 });
    expect(() => verifyNodeFacts(signed, toHex(strangerKeys.publicKey))).toThrow();
  });

  it('defaults the ttl to 5 minutes', () => {
    expect(DEFAULT_FACTS_TTL_MS).toBe(300_000);
  });

  it('re-uses the statement within ttl/2 and signs a fresh one after', async () => {
    const probe = countingProbe();
    const t = clock(1_000_000);
    const source = new NodeFactsSource({ keys: hostKeys, probe: probe.fn, ttlMs: 10_000, now: t.now });
    const first = await source.current();
    t.t += 4_999;
    expect(await source.current()).toBe(first);
    expect(probe.calls).toBe(1);
    t.t = 1_000_000 + 5_000;
    const second = await source.current();
    expect(second).not.toBe(first);
    expect(probe.calls).toBe(2);
    expect(facts(second).issued_at_ms).toBe(1_005_000);
    expect(facts(second).ttl_ms).toBe(10_000);
    expect(facts(second).seq).toBeGreaterThan(facts(first).seq);
  });

  it('seq is at least the issue time and strictly grows, even when the clock goes back', async () => {
    const probe = countingProbe();
    const t = clock(5_000_000);
    const source = new NodeFactsSource({ keys: hostKeys, probe: probe.fn, ttlMs: 1_000, now: t.now });
    const seqs: number[] = [];
    const first = facts(await source.current());
    expect(first.seq).toBe(5_000_000);
    seqs.push(first.seq);
    // The clock goes back: the held statement is from the future, so a new one is signed.
    for (const at of [4_000_000, 3_000_000, 3_000_000, 10, 0]) {
      t.t = at;
      source.invalidate();
      const f = facts(await source.current());
      expect(f.issued_at_ms).toBe(at);
      seqs.push(f.seq);
    }
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
    expect(probe.calls).toBe(6);
  });

  it('signs again without invalidate when the clock went back past the issue time', async () => {
    const probe = countingProbe();
    const t = clock(2_000_000);
    const source = new NodeFactsSource({ keys: hostKeys, probe: probe.fn, ttlMs: 60_000, now: t.now });
    const first = await source.current();
    t.t = 1_999_999;
    const second = await source.current();
    expect(second).not.toBe(first);
    expect(probe.calls).toBe(2);
    expect(facts(second).seq).toBe(facts(first).seq + 1);
  });

  it('removes duplicate capability ids, keeping the first, in order', async () => {
    const probe = countingProbe([
      cap('cpu.arch.x86_64', { n: 1 }),
      cap('runtime.wasi'),
      cap('cpu.arch.x86_64', { n: 2 }),
      cap('runtime.native'),
      cap('runtime.wasi', { late: true }),
    ]);
    const source = new NodeFactsSource({ keys: hostKeys, probe: probe.fn, now: () => 1_000 });
    const f = facts(await source.current());
    expect(f.capabilities.map((c) => c.id)).toEqual(['cpu.arch.x86_64', 'runtime.wasi', 'runtime.native']);
    expect(f.capabilities[0]?.attrs).toEqual({ n: 1 });
    expect(f.capabilities[1]?.attrs).toEqual({});
  });

  it('concurrent callers share one probe', async () => {
    const probe = countingProbe([cap('runtime.wasi')], 30);
    const source = new NodeFactsSource({ keys: hostKeys, probe: probe.fn, now: () => 50_000 });
    const all = await Promise.all([source.current(), source.current(), source.current(), source.current()]);
    expect(probe.calls).toBe(1);
    for (const s of all) expect(s).toBe(all[0]);
    // After it settled, a fresh statement is still cached: no new probe.
    await source.current();
    expect(probe.calls).toBe(1);
  });

  it('invalidate forces a probe on the next call', async () => {
    let caps: readonly Capability[] = [cap('runtime.wasi')];
    let calls = 0;
    const source = new NodeFactsSource({
      keys: hostKeys,
      probe: async () => {
        calls++;
        return caps;
      },
      now: () => 80_000,
    });
    const first = facts(await source.current());
    expect(first.capabilities.map((c) => c.id)).toEqual(['runtime.wasi']);
    caps = [cap('runtime.wasi'), cap('runtime.native')];
    expect(facts(await source.current()).capabilities).toHaveLength(1);
    expect(calls).toBe(1);
    source.invalidate();
    const second = facts(await source.current());
    expect(calls).toBe(2);
    expect(second.capabilities.map((c) => c.id)).toEqual(['runtime.wasi', 'runtime.native']);
    expect(second.seq).toBe(first.seq + 1);
  });

  it('an invalidate during a probe is not lost: the next call probes again', async () => {
    let caps: readonly Capability[] = [cap('runtime.wasi')];
    let calls = 0;
    const source = new NodeFactsSource({
      keys: hostKeys,
      probe: async () => {
        calls++;
        const now = caps;
        await sleep(30);
        return now;
      },
    });
    const first = source.current();
    caps = [cap('runtime.wasi'), cap('runtime.native')];
    source.invalidate();
    const second = await source.current();
    await first;
    expect(calls).toBe(2);
    expect(facts(second).capabilities.map((c) => c.id)).toEqual(['runtime.wasi', 'runtime.native']);
    expect(facts(await source.current()).capabilities).toHaveLength(2);
  });

  it('a failing probe rejects its callers and the next call probes again', async () => {
    let calls = 0;
    const source = new NodeFactsSource({
      keys: hostKeys,
      probe: async () => {
        calls++;
        if (calls === 1) throw new Error('probe failed');
        return [cap('runtime.wasi')];
      },
      now: () => 90_000,
    });
    await expect(Promise.all([source.current(), source.current()])).rejects.toThrow('probe failed');
    expect(calls).toBe(1);
    const f = facts(await source.current());
    expect(calls).toBe(2);
    expect(f.capabilities.map((c) => c.id)).toEqual(['runtime.wasi']);
  });
});
