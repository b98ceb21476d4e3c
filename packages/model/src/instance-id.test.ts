import { blake3Hex, canonicalJson } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveInstanceId } from './instance-id.js';
import type { RunMode } from './run-mode.js';

const REF = 'a'.repeat(64);
const NODE = 'b'.repeat(32);

describe('deriveInstanceId', () => {
  it('is `<workload id>-<first 16 hex of BLAKE3(canonical JSON of v, ref, values, run mode, node)>`', () => {
    const id = deriveInstanceId('hello-cog', REF, { greeting: 'hi' }, { type: 'interval', secs: 60 }, NODE);
    const expected = blake3Hex(
      new TextEncoder().encode(
        canonicalJson({
          v: 1,
          ref: REF,
          values: { greeting: 'hi' },
          run_mode: { type: 'interval', secs: 60 },
          node_id: NODE,
        }),
      ),
    ).slice(0, 16);
    expect(id).toBe(`hello-cog-${expected}`);
    expect(id).toMatch(/^hello-cog-[0-9a-f]{16}$/);
  });

  it('is the same for the same request (key order does not matter) and differs when any part differs', () => {
    const mode: RunMode = { type: 'listener' };
    const a = deriveInstanceId('w', REF, { x: 1, y: 'two' }, mode, NODE);
    expect(deriveInstanceId('w', REF, { y: 'two', x: 1 }, mode, NODE)).toBe(a);
    expect(deriveInstanceId('w', 'c'.repeat(64), { x: 1, y: 'two' }, mode, NODE)).not.toBe(a);
    expect(deriveInstanceId('w', REF, { x: 2, y: 'two' }, mode, NODE)).not.toBe(a);
    expect(deriveInstanceId('w', REF, { x: 1, y: 'two' }, { type: 'once' }, NODE)).not.toBe(a);
    expect(deriveInstanceId('w', REF, { x: 1, y: 'two' }, mode, 'd'.repeat(32))).not.toBe(a);
  });

  it('hashes only the run mode fields (an extra field on an object does not change the id)', () => {
    // cast: a caller outside TypeScript may hand an object with extra fields
    const loose = { type: 'interval', secs: 5, extra: true } as RunMode;
    expect(deriveInstanceId('w', REF, {}, loose, NODE)).toBe(
      deriveInstanceId('w', REF, {}, { type: 'interval', secs: 5 }, NODE),
    );
  });

  it('gives distinct ids for distinct intervals', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 86_400 }), fc.integer({ min: 1, max: 86_400 }), (s, t) => {
        fc.pre(s !== t);
        const id = (secs: number) => deriveInstanceId('w', REF, {}, { type: 'interval', secs }, NODE);
        expect(id(s)).not.toBe(id(t));
      }),
      { numRuns: 200 },
    );
  });
});
