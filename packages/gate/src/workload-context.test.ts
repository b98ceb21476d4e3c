import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeParseContext } from './context.js';
import { type GatedWorkload, gateContextFor, STORE_PIN_RESOURCE_COST } from './workload-context.js';

const KEY = 'a'.repeat(64);
const HASH = 'b'.repeat(64);
const facts = { nodeTier: 'paired', network: 'lan', emulated: false } as const;

const pkg = (cpu: number): GatedWorkload => ({
  kind: 'cog',
  ref: 'c'.repeat(64),
  signerKeys: [KEY],
  artifactHashes: [HASH],
  source: { type: 'package', verified: { body: { resources: { cpu_pct: cpu } } } },
});

describe('gateContextFor', () => {
  it('gives a verified package pinned_signer trust and cpu_pct / 400 as its cost', () => {
    expect(gateContextFor(pkg(100), facts)).toEqual({
      kind: 'cog',
      package_trust: 'pinned_signer',
      node_tier: 'paired',
      network: 'lan',
      secrets: false,
      emulated: false,
      resource_cost: 0.25,
      package_id: 'c'.repeat(64),
      signer_keys: [KEY],
      artifact_hashes: [HASH],
    });
    expect(gateContextFor(pkg(6400), facts).resource_cost).toBe(1);
    expect(gateContextFor(pkg(Number.NaN), facts).resource_cost).toBe(1);
  });

  it('gives a store pin operator_attested trust, or unsigned when the operator never pinned it', () => {
    const pin: GatedWorkload = {
      kind: 'cog',
      ref: 'store/hello@1.0.0',
      signerKeys: [],
      artifactHashes: [],
      source: { type: 'store_pin' },
    };
    const ctx = gateContextFor(pin, { ...facts, network: 'egress' });
    expect(ctx.package_trust).toBe('operator_attested');
    expect(ctx.resource_cost).toBe(STORE_PIN_RESOURCE_COST);
    expect(ctx.network).toBe('egress');
    const unattested = { ...pin, source: { type: 'store_pin', unattested: true } } as const;
    expect(gateContextFor(unattested, facts).package_trust).toBe('unsigned');
  });

  it('always builds a context the gate accepts, with a cost in 0..1', () => {
    fc.assert(
      fc.property(
        fc.double(),
        fc.constantFrom('discovered', 'paired', 'pinned'),
        fc.boolean(),
        (cpu, tier, em) => {
          const ctx = gateContextFor(pkg(cpu), { nodeTier: tier, network: 'none', emulated: em });
          expect(ctx.resource_cost).toBeGreaterThanOrEqual(0);
          expect(ctx.resource_cost).toBeLessThanOrEqual(1);
          expect(safeParseContext(ctx).ok).toBe(true);
        },
      ),
    );
  });
});
