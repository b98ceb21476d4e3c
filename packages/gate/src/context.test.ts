import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contextForChain, parseContext, safeParseContext } from './context.js';
import { GateError, ValidationError } from './errors.js';
import { BASE } from './test-util.js';

describe('context', () => {
  it('accepts a full context, defaults the reference lists and lower-cases keys and hashes', () => {
    expect(parseContext(BASE)).toEqual(BASE);
    const { signer_keys: _s, artifact_hashes: _a, ...bare } = BASE;
    expect(parseContext(bare)).toMatchObject({ signer_keys: [], artifact_hashes: [] });
    const upper = parseContext({
      ...BASE,
      signer_keys: ['AB'.repeat(32)],
      artifact_hashes: ['CD'.repeat(32)],
    });
    expect(upper.signer_keys).toEqual(['ab'.repeat(32)]);
    expect(upper.artifact_hashes).toEqual(['cd'.repeat(32)]);
  });

  it('lower-cases a package id that is 64 hex characters (and keeps other ids as given)', () => {
    const id = 'AB'.repeat(32);
    expect(parseContext({ ...BASE, package_id: id }).package_id).toBe(id.toLowerCase());
    expect(parseContext({ workload: { ...BASE, package_id: id } }).package_id).toBe(id.toLowerCase());
    expect(parseContext({ ...BASE, package_id: 'Acme/Sensor@1.0.0' }).package_id).toBe('Acme/Sensor@1.0.0');
  });

  it('treats a null accelerator as none and keeps a named one', () => {
    expect(parseContext({ ...BASE, accelerator: null })).not.toHaveProperty('accelerator');
    expect(parseContext({ ...BASE, accelerator: 'hailo8' }).accelerator).toBe('hailo8');
  });

  it('accepts the reference host shape {"workload": {...}} and names fields under it', () => {
    expect(parseContext({ workload: BASE })).toEqual(BASE);
    const r = safeParseContext({ workload: { ...BASE, node_tier: 'root' } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.field).toBe('workload.node_tier');
  });

  it.each([
    ['kind', { kind: '' }],
    ['kind', { kind: 'has space' }],
    ['package_trust', { package_trust: 'trusted' }],
    ['node_tier', { node_tier: 'self-asserted' }],
    ['network', { network: 'internet' }],
    ['secrets', { secrets: 'no' }],
    ['emulated', { emulated: 1 }],
    ['accelerator', { accelerator: 7 }],
    ['resource_cost', { resource_cost: 1.5 }],
    ['resource_cost', { resource_cost: -0.1 }],
    ['resource_cost', { resource_cost: Number.NaN }],
    ['resource_cost', { resource_cost: '0.5' }],
    ['package_id', { package_id: undefined }],
    ['signer_keys[1]', { signer_keys: ['aa', ''] }],
    ['artifact_hashes', { artifact_hashes: 'bb' }],
    ['colour', { colour: 'red' }],
  ])('refuses a bad %s with the field named', (field, over) => {
    let err: unknown;
    try {
      parseContext({ ...BASE, ...over });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).code).toBe('invalid_context');
    expect((err as ValidationError).field).toBe(field);
    expect((err as ValidationError).message).toContain(field);
  });

  it('refuses non-objects at $', () => {
    for (const junk of [null, 3, 'x', [], undefined]) {
      const r = safeParseContext(junk);
      expect(r.ok).toBe(false);
    }
  });

  it('chains the cost as integer basis points', () => {
    expect(contextForChain(parseContext({ ...BASE, resource_cost: 0.12345 }))).toMatchObject({
      resource_cost_bp: 1235,
    });
    expect(contextForChain(BASE)).not.toHaveProperty('resource_cost');
  });

  it('property: junk never crashes, it is a context or a coded error naming a field', () => {
    const junkish = fc.oneof(
      fc.anything(),
      fc.record({
        kind: fc.oneof(fc.string(), fc.anything()),
        package_trust: fc.constantFrom('unsigned', 'pinned_signer', 'x', 3),
        node_tier: fc.constantFrom('discovered', 'pinned', null),
        network: fc.constantFrom('none', 'egress', true),
        secrets: fc.anything(),
        emulated: fc.boolean(),
        resource_cost: fc.oneof(fc.double(), fc.integer()),
        package_id: fc.string(),
      }),
    );
    fc.assert(
      fc.property(junkish, (v) => {
        const r = safeParseContext(v);
        if (r.ok) return;
        expect(r.error).toBeInstanceOf(GateError);
        expect(r.error.code).toBe('invalid_context');
        expect(typeof r.error.field).toBe('string');
        expect(r.error.issues.length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });
});
