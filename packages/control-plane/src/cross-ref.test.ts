import { openMemoryChain } from '@heddle/chain';
import { describe, expect, it } from 'vitest';
import { crossRef } from './cross-ref.js';
import type { PlaneContext } from './plane-context.js';

describe('crossRef', () => {
  it("names a decision that is not in this controller's chain, and nothing for its own", async () => {
    const chain = await openMemoryChain();
    const own = await chain.append('workload.placement', 'workload.place', { phase: 'decision' });
    // cast: crossRef reads only the context's chain
    const ctx = { chain } as unknown as PlaneContext;
    expect(crossRef(ctx, own.hash)).toEqual({});
    expect(crossRef(ctx, 'e'.repeat(64))).toEqual({
      refers_to: [{ controller: null, event: 'e'.repeat(64), kind: 'workload.place' }],
    });
    expect(crossRef(ctx, undefined)).toEqual({});
    expect(crossRef(ctx, 'not a hash')).toEqual({});
  });
});
