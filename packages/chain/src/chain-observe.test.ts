import { describe, expect, it } from 'vitest';
import type { AppendObservation } from './chain-types.js';
import { openMemoryChain } from './open.js';

describe('Chain.observe', () => {
  it('tells every observer of each settled append, in order, with its kind, payload and outcome', async () => {
    const chain = await openMemoryChain();
    const seen: AppendObservation[] = [];
    const stop = chain.observe((o) => seen.push(o));
    chain.observe(() => {
      throw new Error('an observer that throws changes nothing');
    });
    await chain.append('workload.host', 'workload.refuse', { code: 'expired' });
    await expect(chain.append('workload.host', 'Not A Kind', {})).rejects.toThrow();
    expect(seen.map((o) => [o.kind, o.payload, o.ok])).toEqual([
      ['workload.refuse', { code: 'expired' }, true],
      ['Not A Kind', {}, false],
    ]);
    expect(seen.every((o) => o.ms >= 0 && o.source === 'workload.host')).toBe(true);
    stop();
    await chain.append('workload.host', 'workload.place', {});
    expect(seen).toHaveLength(2);
    expect(chain.size).toBe(2);
  });

  it('keeps seq order of appends made together while observed', async () => {
    const chain = await openMemoryChain();
    const kinds: string[] = [];
    chain.observe((o) => kinds.push(o.kind));
    const events = await Promise.all(['a.one', 'a.two', 'a.three'].map((k) => chain.append('s', k, {})));
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(kinds).toEqual(['a.one', 'a.two', 'a.three']);
  });
});
