import { blake3Hex, canonicalJson, utf8 } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import {
  type Chain,
  ChainError,
  type ChainEvent,
  type ChainStore,
  computeEventHash,
  computePayloadHash,
  EVENT_HASH_TAG,
  encodeEvent,
  eventHeaderText,
  GENESIS_PREV_HASH,
  MemoryChainStore,
  openChain,
  openMemoryChain,
  PAYLOAD_HASH_TAG,
  verifyEvents,
} from './index.js';

function clock(start = 1_700_000_000_000): () => number {
  let t = start;
  return () => t++;
}

async function sample(n: number): Promise<Chain> {
  const chain = await openMemoryChain({ clock: clock() });
  for (let i = 0; i < n; i++) {
    const kind = i % 3 === 0 ? 'workload.place' : i % 3 === 1 ? 'workload.start' : 'workload.stop';
    const source = i % 2 === 0 ? 'workload.host' : 'workload.runtime';
    await chain.append(source, kind, { i, instance: `inst-${i}`, note: 'héllo' });
  }
  return chain;
}

const mutable = (events: readonly ChainEvent[]): Record<string, unknown>[] =>
  events.map((e) => structuredClone(e) as unknown as Record<string, unknown>);

describe('append', () => {
  it('returns the full event with seq from 0, the injected ts and linked hashes', async () => {
    const chain = await openMemoryChain({ clock: () => 1234 });
    const a = await chain.append('workload.host', 'workload.place', { b: 2, a: 1 });
    const b = await chain.append('workload', 'workload.start', null);
    expect(a.seq).toBe(0);
    expect(b.seq).toBe(1);
    expect(a.ts).toBe(1234);
    expect(a.prev_hash).toBe(GENESIS_PREV_HASH);
    expect(b.prev_hash).toBe(a.hash);
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.payload).toEqual({ a: 1, b: 2 });
    expect(Object.keys(a).sort()).toEqual(
      ['hash', 'kind', 'payload', 'payload_hash', 'prev_hash', 'seq', 'source', 'ts'].sort(),
    );
    expect(Object.isFrozen(a)).toBe(true);
    expect(chain.size).toBe(2);
    expect(chain.head).toBe(b.hash);
  });

  it('hashes exactly as documented: BLAKE3(tag || RFC 8785 canonical JSON)', async () => {
    const chain = await openMemoryChain({ clock: () => 99 });
    const payload = { z: [1, 'x', { y: true }], a: 'é\u2028"' };
    const e = await chain.append('workload.runtime', 'workload.stop', payload);
    expect(e.payload_hash).toBe(blake3Hex(utf8(PAYLOAD_HASH_TAG + canonicalJson(payload))));
    const header = {
      seq: e.seq,
      ts: e.ts,
      source: e.source,
      kind: e.kind,
      payload_hash: e.payload_hash,
      prev_hash: e.prev_hash,
    };
    expect(e.hash).toBe(blake3Hex(utf8(EVENT_HASH_TAG + canonicalJson(header))));
    expect(computeEventHash(header)).toBe(e.hash);
    expect(eventHeaderText(header)).toBe(canonicalJson(header));
    expect(encodeEvent(e)).toBe(canonicalJson(e));
    expect(computePayloadHash(payload)).toBe(e.payload_hash);
  });

  it('matches the worked example of docs/chain.md', async () => {
    const chain = await openMemoryChain({ clock: () => 1_700_000_000_000 });
    const a = await chain.append('workload.host', 'workload.place', {
      instance: 'web-1',
      node: '0f3c5d2a9b8e7f6012345678abcdef01',
    });
    const b = await chain.append('workload.runtime', 'workload.start', null);
    expect(a.payload_hash).toBe('85d135c093dfb9d79ce022395aab9b65053f25d89282109e9d62f13f1f1d00c0');
    expect(a.hash).toBe('48282a1037bc75a92e94e93ac50907d4b9d821fb784f65601298ad51b2fabb2d');
    expect(b.payload_hash).toBe('2981a07c7a44c42fe4f0f562feb39b0b675163d8c685c8f0ae7e56f04f4f1f0d');
    expect(b.hash).toBe('9a6c9940a50ba2cb3849f4a5b174b74a4e3bbdca9177c1829b3258e841e6174c');
    expect(chain.root(0)).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    expect(chain.root()).toBe('5b82234d671820f6337cfc42d78cda4a7c602e9e0beb30a11d756b5e0dbad361');
  });

  it('stores a copy of the payload, as it will read back', async () => {
    const chain = await openMemoryChain();
    const payload = { n: 1, gone: undefined, neg: -0 };
    const e = await chain.append('workload', 'workload.install', payload);
    payload.n = 2;
    expect(e.payload).toEqual({ n: 1, neg: 0 });
    expect(chain.verify().ok).toBe(true);
  });

  it('gives concurrent appends consecutive seqs in call order', async () => {
    const chain = await openMemoryChain();
    const events = await Promise.all(
      Array.from({ length: 50 }, (_, i) => chain.append('workload', 'x.y', { i })),
    );
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(events.map((e) => (e.payload as { i: number }).i)).toEqual(events.map((e) => e.seq));
    expect(chain.verify().ok).toBe(true);
  });

  it('accepts any dotted lower-case identifier and refuses others with a code', async () => {
    const chain = await openMemoryChain();
    await expect(chain.append('my_app.audit', 'my_app.thing_done', {})).resolves.toMatchObject({ seq: 0 });
    for (const bad of [
      '',
      'Workload',
      'workload.',
      '.x',
      'a..b',
      'a-b',
      '1abc',
      'a b',
      'a.1b',
      'x'.repeat(129),
    ]) {
      await expect(chain.append(bad, 'workload.start', {})).rejects.toMatchObject({
        code: 'invalid_source',
        field: 'source',
      });
      await expect(chain.append('workload', bad, {})).rejects.toMatchObject({
        code: 'invalid_kind',
        field: 'kind',
      });
    }
    await expect(chain.append('workload', 'k', 1.5)).rejects.toMatchObject({ code: 'invalid_payload' });
    await expect(chain.append('workload', 'k', { a: { b: Number.NaN } })).rejects.toMatchObject({
      code: 'invalid_payload',
      field: 'payload.a.b',
    });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(chain.append('workload', 'k', cyclic)).rejects.toBeInstanceOf(ChainError);
    expect(chain.size).toBe(1);
    expect(chain.verify().ok).toBe(true);
  });

  it('refuses a clock that is not an integer of milliseconds', async () => {
    const chain = await openMemoryChain({ clock: () => 1.5 });
    await expect(chain.append('workload', 'k', {})).rejects.toMatchObject({ code: 'invalid_timestamp' });
    expect(chain.size).toBe(0);
  });

  it('refuses appends after close', async () => {
    const chain = await openMemoryChain();
    await chain.close();
    await expect(chain.append('workload', 'k', {})).rejects.toMatchObject({ code: 'chain_closed' });
  });
});

describe('lookups', () => {
  it('finds by seq, hash, kind, source and range', async () => {
    const chain = await sample(30);
    const e7 = chain.get(7) as ChainEvent;
    expect(e7.seq).toBe(7);
    expect(chain.get(30)).toBeUndefined();
    expect(chain.get(-1)).toBeUndefined();
    expect(chain.getByHash(e7.hash)).toBe(e7);
    expect(chain.getByHash('0'.repeat(64))).toBeUndefined();
    expect(chain.byKindOf('workload.start').map((e) => e.seq)).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
    expect(chain.bySourceOf('workload.runtime').every((e) => e.seq % 2 === 1)).toBe(true);
    expect(chain.find({ kind: 'workload.start', source: 'workload.host' }).map((e) => e.seq)).toEqual([
      4, 10, 16, 22, 28,
    ]);
    expect(chain.find({ kind: 'workload.start', from: 5, to: 20, limit: 3 }).map((e) => e.seq)).toEqual([
      7, 10, 13,
    ]);
    expect(chain.find({ kind: 'nope' })).toEqual([]);
    expect(chain.range(28).map((e) => e.seq)).toEqual([28, 29]);
    expect(chain.range(3, 6).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(chain.range(-5, 2).map((e) => e.seq)).toEqual([0, 1]);
    expect(chain.tail(2).map((e) => e.seq)).toEqual([28, 29]);
    expect([...chain].length).toBe(30);
  });

  it('shows only durable events while appends are pending', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const inner = new MemoryChainStore();
    const slow: ChainStore = {
      readOnly: false,
      load: () => inner.load(),
      append: async (e, r) => {
        await gate;
        await inner.append(e, r);
      },
      close: () => inner.close(),
    };
    const chain = await openChain(slow);
    const p = chain.append('workload', 'k', { a: 1 });
    expect(chain.size).toBe(0);
    expect(chain.get(0)).toBeUndefined();
    release();
    const e = await p;
    expect(chain.size).toBe(1);
    expect(chain.getByHash(e.hash)).toBe(e);
  });
});

describe('verify', () => {
  it('accepts an intact chain, and the empty one', async () => {
    const chain = await sample(20);
    expect(chain.verify()).toEqual({ ok: true, size: 20, head: chain.head, failure: null });
    expect(verifyEvents([])).toEqual({ ok: true, size: 0, head: GENESIS_PREV_HASH, failure: null });
  });

  it('names the first bad event and why: edits of payload, hash, prev_hash, ts, seq, source, kind', async () => {
    const events = (await sample(12)).range(0);
    const cases: [string, (e: Record<string, unknown>) => void, string][] = [
      ['payload', (e) => ((e.payload as { i: number }).i = 99), 'payload_hash_mismatch'],
      ['payload_hash', (e) => (e.payload_hash = 'a'.repeat(64)), 'payload_hash_mismatch'],
      ['hash', (e) => (e.hash = 'b'.repeat(64)), 'hash_mismatch'],
      ['prev_hash', (e) => (e.prev_hash = 'c'.repeat(64)), 'hash_mismatch'],
      ['ts', (e) => (e.ts = (e.ts as number) + 1), 'hash_mismatch'],
      ['source', (e) => (e.source = 'workload'), 'hash_mismatch'],
      ['kind', (e) => (e.kind = 'workload.revoke'), 'hash_mismatch'],
      ['seq', (e) => (e.seq = 3), 'hash_mismatch'],
    ];
    for (const [name, edit, reason] of cases) {
      const copy = mutable(events);
      edit(copy[5] as Record<string, unknown>);
      const r = verifyEvents(copy);
      expect(r.ok, name).toBe(false);
      expect(r.failure?.reason, name).toBe(reason);
      expect(r.failure?.seq, name).toBe(5);
      expect(r.size, name).toBe(5);
      expect(r.head, name).toBe(events[4]?.hash);
      expect(r.failure?.message, name).toMatch(/^event 5: /);
    }
  });

  it('detects an edit whose hash was recomputed at the next link', async () => {
    const events = (await sample(8)).range(0);
    const copy = mutable(events);
    const e = copy[3] as Record<string, unknown>;
    e.payload = { forged: true };
    e.payload_hash = computePayloadHash(e.payload);
    e.hash = computeEventHash(e as unknown as ChainEvent);
    expect(verifyEvents(copy).failure).toMatchObject({ reason: 'broken_link', seq: 4 });
  });

  it('detects malformed events, naming the field', async () => {
    const events = mutable((await sample(4)).range(0));
    (events[2] as Record<string, unknown>).extra = 1;
    expect(verifyEvents(events).failure).toMatchObject({ reason: 'malformed', seq: 2, field: 'extra' });
    delete (events[2] as Record<string, unknown>).extra;
    (events[2] as Record<string, unknown>).hash = 'XYZ';
    expect(verifyEvents(events).failure).toMatchObject({ reason: 'malformed', seq: 2, field: 'hash' });
    expect(verifyEvents([null]).failure).toMatchObject({ reason: 'malformed', seq: 0 });
    const first = mutable((await sample(1)).range(0));
    (first[0] as Record<string, unknown>).payload = 1.5;
    expect(verifyEvents(first).failure).toMatchObject({ reason: 'malformed', seq: 0, field: 'payload' });
  });

  it('detects reorders, drops and duplicates', async () => {
    const events = (await sample(10)).range(0);
    const swapped = [...events];
    [swapped[3], swapped[4]] = [swapped[4] as ChainEvent, swapped[3] as ChainEvent];
    expect(verifyEvents(swapped).failure).toMatchObject({ reason: 'reordered', seq: 3 });
    const dropped = events.filter((e) => e.seq !== 6);
    expect(verifyEvents(dropped).failure).toMatchObject({ reason: 'dropped', seq: 6 });
    expect(verifyEvents(dropped).failure?.message).toContain('event 6 is missing');
    const droppedMany = events.filter((e) => e.seq < 2 || e.seq > 4);
    expect(verifyEvents(droppedMany).failure?.message).toContain('events 2..4 are missing');
    const duplicated = [...events.slice(0, 5), events[4] as ChainEvent, ...events.slice(5)];
    expect(verifyEvents(duplicated).failure).toMatchObject({ reason: 'reordered', seq: 5 });
    const droppedFirst = events.slice(1);
    expect(verifyEvents(droppedFirst).failure).toMatchObject({ reason: 'dropped', seq: 0 });
  });

  it('detects a substituted genesis', async () => {
    const a = (await sample(3)).range(0);
    const other = await openMemoryChain({ clock: clock(5) });
    await other.append('workload', 'k', {});
    const mixed = [other.get(0) as ChainEvent, ...a.slice(1)];
    expect(verifyEvents(mixed).failure).toMatchObject({ reason: 'broken_link', seq: 1 });
  });

  it('detects truncation and rewritten history against a checkpoint', async () => {
    const chain = await sample(10);
    const events = chain.range(0);
    const anchor = { size: 10, head: chain.head, root: chain.root() };
    expect(verifyEvents(events, { checkpoint: anchor }).ok).toBe(true);
    expect(verifyEvents(events.slice(0, 7), { checkpoint: anchor }).failure).toMatchObject({
      reason: 'truncated',
      seq: 7,
    });
    expect(verifyEvents([], { checkpoint: anchor }).failure).toMatchObject({ reason: 'truncated', seq: 0 });
    // A rewritten (but internally consistent) history.
    const forged = await openMemoryChain({ clock: clock() });
    for (const e of events) await forged.append(e.source, e.kind, e.seq === 8 ? { i: 'forged' } : e.payload);
    const r = verifyEvents(forged.range(0), { checkpoint: anchor });
    expect(r.failure).toMatchObject({ reason: 'checkpoint_mismatch', seq: 9 });
    expect(forged.checkCheckpoint(anchor).failure).toMatchObject({ reason: 'checkpoint_mismatch' });
    // Root alone (a wrong root with the right head) is checked too.
    const badRoot = { ...anchor, root: 'd'.repeat(64) };
    expect(verifyEvents(events, { checkpoint: badRoot }).failure?.reason).toBe('checkpoint_mismatch');
    // A bad event inside the covered range is reported rather than the truncation.
    const copy = mutable(events.slice(0, 7));
    (copy[2] as Record<string, unknown>).ts = 1;
    expect(verifyEvents(copy, { checkpoint: anchor }).failure).toMatchObject({
      reason: 'hash_mismatch',
      seq: 2,
    });
    // And checking against the chain itself.
    expect(chain.checkCheckpoint(anchor).ok).toBe(true);
    expect(chain.checkCheckpoint({ size: 11, head: chain.head }).failure?.reason).toBe('truncated');
    expect(chain.checkCheckpoint({ size: 0, head: GENESIS_PREV_HASH }).ok).toBe(true);
  });

  it('detects in-memory mutation of a chain', async () => {
    const chain = await sample(5);
    ((chain.get(2) as ChainEvent).payload as { i: number }).i = 7;
    expect(chain.verify().failure).toMatchObject({ reason: 'payload_hash_mismatch', seq: 2 });
  });

  it('refuses to open a store holding a bad chain', async () => {
    const events = mutable((await sample(4)).range(0));
    (events[1] as Record<string, unknown>).ts = 5;
    const store = new MemoryChainStore(events as unknown as ChainEvent[]);
    await expect(openChain(store)).rejects.toMatchObject({
      code: 'chain_corrupt',
      failure: { reason: 'hash_mismatch', seq: 1 },
    });
  });

  it('reopens a memory store with its events', async () => {
    const store = new MemoryChainStore();
    const a = await openMemoryChain({ store });
    await a.append('workload', 'k', { n: 1 });
    await a.append('workload', 'k', { n: 2 });
    const b = await openMemoryChain({ store });
    expect(b.size).toBe(2);
    expect(b.head).toBe(a.head);
    expect(b.root()).toBe(a.root());
    expect((await b.append('workload', 'k', {})).prev_hash).toBe(a.head);
  });
});

describe('store failures', () => {
  it('rejects with chain_store_failed and refuses further appends', async () => {
    let fail = false;
    const inner = new MemoryChainStore();
    const flaky: ChainStore = {
      readOnly: false,
      load: () => inner.load(),
      append: (e, r) => (fail ? Promise.reject(new Error('EIO')) : inner.append(e, r)),
      close: () => inner.close(),
    };
    const chain = await openChain(flaky);
    await chain.append('workload', 'k', {});
    fail = true;
    await expect(chain.append('workload', 'k', {})).rejects.toMatchObject({ code: 'chain_store_failed' });
    fail = false;
    await expect(chain.append('workload', 'k', {})).rejects.toMatchObject({ code: 'chain_store_failed' });
    expect(chain.size).toBe(1);
    expect(chain.verify().ok).toBe(true);
  });

  it('treats a store that throws like one that rejects', async () => {
    const inner = new MemoryChainStore();
    const throwing: ChainStore = {
      readOnly: false,
      load: () => inner.load(),
      append: () => {
        throw new Error('boom');
      },
      close: () => inner.close(),
    };
    const chain = await openChain(throwing);
    await expect(chain.append('workload', 'k', {})).rejects.toMatchObject({ code: 'chain_store_failed' });
    await expect(chain.append('workload', 'k', {})).rejects.toMatchObject({ code: 'chain_store_failed' });
    expect(chain.size).toBe(0);
  });
});
