import { NETWORK_LEVELS, NODE_TIERS } from '@heddle/model';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GateContextSchema } from './context.js';
import { fastParseContext } from './context-fast.js';
import { PACKAGE_TRUST_LEVELS } from './levels.js';
import { BASE } from './test-util.js';

const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, fc.anything());
const ref = fc.oneof(fc.constantFrom('cog', 'a b', '', 'X'.repeat(257), 'AbC1'), fc.string({ maxLength: 8 }));
const nearContext = fc.record(
  {
    kind: maybe(ref),
    package_trust: maybe(fc.constantFrom(...PACKAGE_TRUST_LEVELS, 'root')),
    node_tier: maybe(fc.constantFrom(...NODE_TIERS, 'x')),
    network: maybe(fc.constantFrom(...NETWORK_LEVELS)),
    secrets: maybe(fc.boolean()),
    emulated: maybe(fc.boolean()),
    accelerator: fc.oneof(fc.constant(null), fc.constant(undefined), ref, fc.integer()),
    resource_cost: fc.oneof(fc.double(), fc.constantFrom(0, 1, -0, 0.5, 1.0000001, Number.NaN)),
    package_id: maybe(ref),
    signer_keys: fc.oneof(fc.array(ref, { maxLength: 3 }), fc.anything()),
    artifact_hashes: fc.array(ref, { maxLength: 3 }),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
);

describe('fastParseContext', () => {
  it('accepts a plain valid context exactly as the schema does', () => {
    expect(fastParseContext(BASE)).toEqual(GateContextSchema.parse(BASE));
    expect(fastParseContext({ ...BASE, accelerator: null })).toEqual(
      GateContextSchema.parse({ ...BASE, accelerator: null }),
    );
  });

  it('property: never accepts what the schema refuses, and when it accepts, returns the same value', () => {
    fc.assert(
      fc.property(fc.oneof(nearContext, fc.anything()), (v) => {
        const fast = fastParseContext(v);
        if (fast === undefined) return;
        const slow = GateContextSchema.safeParse(v);
        expect(slow.success).toBe(true);
        if (slow.success) {
          expect(fast).toStrictEqual(slow.data);
          expect(Object.keys(fast)).toEqual(Object.keys(slow.data));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('property: accepts every plain valid context', () => {
    const valid = fc.record(
      {
        kind: fc.constantFrom('cog', 'wasi'),
        package_trust: fc.constantFrom(...PACKAGE_TRUST_LEVELS),
        node_tier: fc.constantFrom(...NODE_TIERS),
        network: fc.constantFrom(...NETWORK_LEVELS),
        secrets: fc.boolean(),
        emulated: fc.boolean(),
        accelerator: fc.constantFrom('cuda', null),
        resource_cost: fc.double({ min: 0, max: 1, noNaN: true }),
        package_id: fc.constantFrom('p', 'acme/x@1'),
        signer_keys: fc.array(fc.constantFrom('AA', 'bb')),
        artifact_hashes: fc.array(fc.constantFrom('CC')),
      },
      {
        requiredKeys: [
          'kind',
          'package_trust',
          'node_tier',
          'network',
          'secrets',
          'emulated',
          'resource_cost',
          'package_id',
        ],
      },
    );
    fc.assert(
      fc.property(valid, (v) => {
        expect(fastParseContext(v)).toStrictEqual(GateContextSchema.parse(v));
      }),
      { numRuns: 500 },
    );
  });
});
