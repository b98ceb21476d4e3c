import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePolicy } from './compile.js';
import type { GateContext } from './context.js';
import { decide } from './decide.js';
import { DEFAULT_POLICY } from './default-policy.js';
import { GateError, ValidationError } from './errors.js';
import type { Action } from './levels.js';
import { loadPolicyFile, parsePolicy, parsePolicyText } from './policy.js';
import { RevocationSet } from './revocation.js';
import { BASE } from './test-util.js';

const examples = fileURLToPath(new URL('../../../examples/policies/', import.meta.url));
const rule = { id: 'r1', effect: 'permit', actions: ['workload.place'] };

function refused(input: unknown): ValidationError {
  try {
    parsePolicy(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error('accepted');
}

describe('policy file', () => {
  it('ships a default policy equal to examples/policies/default.json', () => {
    const file = loadPolicyFile(join(examples, 'default.json'));
    expect(file).toEqual(DEFAULT_POLICY);
    expect(compilePolicy(file).hash).toBe(compilePolicy(DEFAULT_POLICY).hash);
    expect(compilePolicy(file).hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('validates every example policy', () => {
    expect(loadPolicyFile(join(examples, 'with-approvals.json')).rules.length).toBeGreaterThan(3);
    const files = readdirSync(examples).filter((f) => f.endsWith('.json'));
    expect(files).toContain('edge-cogs.json');
    for (const f of files) expect(loadPolicyFile(join(examples, f)).version).toBe(1);
  });

  it("edge-cogs.json (the operator guide's policy) permits the native example cog, which the default policy denies", () => {
    // What the controller and a host ask for a native cog: a native process is not network-isolated,
    // so its network is egress (docs/operator-guide.md, section 3.1).
    const native: GateContext = { ...BASE, package_trust: 'pinned_signer', network: 'egress' };
    const edge = compilePolicy(loadPolicyFile(join(examples, 'edge-cogs.json')));
    const none = new RevocationSet();
    const actions: Action[] = [
      'workload.place',
      'workload.load',
      'workload.start',
      'workload.stop',
      'workload.unload',
    ];
    for (const action of actions) {
      expect(decide(edge, none, 'controller', action, native)).toMatchObject({
        verdict: 'permit',
        rule: 'cogs-egress',
      });
      expect(decide(compilePolicy(DEFAULT_POLICY), none, 'controller', action, native).verdict).toBe('deny');
    }
    // Everything else stays as the default has it: no secrets, no emulation, no discovered nodes.
    expect(decide(edge, none, 'controller', 'workload.place', { ...native, emulated: true }).verdict).toBe(
      'deny',
    );
    expect(
      decide(edge, none, 'controller', 'workload.place', { ...native, node_tier: 'discovered' }).verdict,
    ).toBe('deny');
  });

  it.each([
    ['version', { version: 2, name: 'p', rules: [] }],
    ['name', { version: 1, name: '', rules: [] }],
    ['rules', { version: 1, name: 'p', rules: {} }],
    ['extra', { version: 1, name: 'p', rules: [], extra: true }],
    ['rules[0].id', { version: 1, name: 'p', rules: [{ ...rule, id: 'has space' }] }],
    ['rules[0].id', { version: 1, name: 'p', rules: [{ ...rule, id: 'builtin:default_deny' }] }],
    ['rules[0].effect', { version: 1, name: 'p', rules: [{ ...rule, effect: 'allow' }] }],
    ['rules[0].actions', { version: 1, name: 'p', rules: [{ ...rule, actions: [] }] }],
    [
      'rules[0].actions[1]',
      { version: 1, name: 'p', rules: [{ ...rule, actions: ['workload.place', 'workload.reboot'] }] },
    ],
    ['rules[0].kinds', { version: 1, name: 'p', rules: [{ ...rule, kinds: [] }] }],
    ['rules[0].agents[0]', { version: 1, name: 'p', rules: [{ ...rule, agents: [''] }] }],
    [
      'rules[0].min_package_trust',
      { version: 1, name: 'p', rules: [{ ...rule, min_package_trust: 'high' }] },
    ],
    ['rules[0].max_package_trust', { version: 1, name: 'p', rules: [{ ...rule, max_package_trust: 1 }] }],
    ['rules[0].min_node_tier', { version: 1, name: 'p', rules: [{ ...rule, min_node_tier: 'trusted' }] }],
    ['rules[0].max_node_tier', { version: 1, name: 'p', rules: [{ ...rule, max_node_tier: null }] }],
    ['rules[0].min_network', { version: 1, name: 'p', rules: [{ ...rule, min_network: 'wan' }] }],
    ['rules[0].max_network', { version: 1, name: 'p', rules: [{ ...rule, max_network: 'wan' }] }],
    ['rules[0].secrets', { version: 1, name: 'p', rules: [{ ...rule, secrets: 'yes' }] }],
    ['rules[0].emulated', { version: 1, name: 'p', rules: [{ ...rule, emulated: 0 }] }],
    ['rules[0].accelerators', { version: 1, name: 'p', rules: [{ ...rule, accelerators: 'any' }] }],
    ['rules[0].min_resource_cost', { version: 1, name: 'p', rules: [{ ...rule, min_resource_cost: -1 }] }],
    ['rules[0].max_resource_cost', { version: 1, name: 'p', rules: [{ ...rule, max_resource_cost: 2 }] }],
    ['rules[0].reason', { version: 1, name: 'p', rules: [{ ...rule, reason: '' }] }],
    ['rules[0].colour', { version: 1, name: 'p', rules: [{ ...rule, colour: 'red' }] }],
    ['rules[1].id', { version: 1, name: 'p', rules: [rule, rule] }],
    [
      'rules[0].min_node_tier',
      { version: 1, name: 'p', rules: [{ ...rule, min_node_tier: 'pinned', max_node_tier: 'paired' }] },
    ],
    [
      'rules[0].min_package_trust',
      {
        version: 1,
        name: 'p',
        rules: [{ ...rule, min_package_trust: 'pinned_signer', max_package_trust: 'unsigned' }],
      },
    ],
    [
      'rules[0].min_network',
      { version: 1, name: 'p', rules: [{ ...rule, min_network: 'egress', max_network: 'lan' }] },
    ],
    [
      'rules[0].min_resource_cost',
      { version: 1, name: 'p', rules: [{ ...rule, min_resource_cost: 0.9, max_resource_cost: 0.1 }] },
    ],
  ])('refuses a bad %s with the field named', (field, input) => {
    const e = refused(input);
    expect(e.code).toBe('invalid_policy');
    expect(e.field).toBe(field);
    expect(e.message).toContain(field);
  });

  it('lists every problem, not just the first', () => {
    const e = refused({
      version: 1,
      name: 'p',
      rules: [{ ...rule, effect: 'x', min_node_tier: 'y' }, { id: '' }],
    });
    const fields = e.issues.map((i) => i.field);
    expect(fields).toEqual(
      expect.arrayContaining(['rules[0].effect', 'rules[0].min_node_tier', 'rules[1].id']),
    );
  });

  it('refuses malformed JSON text with the offending path (duplicate keys too)', () => {
    expect(() => parsePolicyText('{"version":1,')).toThrow(
      expect.objectContaining({ code: 'invalid_policy_json' }),
    );
    try {
      parsePolicyText('{"version":1,"name":"a","name":"b","rules":[]}');
      expect.unreachable();
    } catch (e) {
      expect((e as GateError).code).toBe('invalid_policy_json');
      expect((e as GateError).message).toMatch(/duplicate key "name"/);
    }
    expect(parsePolicyText('{"version":1,"name":"a","rules":[]}').rules).toEqual([]);
  });

  it('refuses an unreadable file with policy_unreadable', () => {
    expect(() => loadPolicyFile('/nonexistent/policy.json')).toThrow(
      expect.objectContaining({ code: 'policy_unreadable' }),
    );
    const dir = mkdtempSync(join(tmpdir(), 'gate-'));
    writeFileSync(join(dir, 'p.json'), '[]');
    expect(() => loadPolicyFile(join(dir, 'p.json'))).toThrow(
      expect.objectContaining({ code: 'invalid_policy', field: '$' }),
    );
  });

  it('hashes a policy deterministically and differently when a rule changes', () => {
    const a = compilePolicy(DEFAULT_POLICY).hash;
    expect(compilePolicy(JSON.parse(JSON.stringify(DEFAULT_POLICY))).hash).toBe(a);
    const changed = { ...DEFAULT_POLICY, rules: [{ ...DEFAULT_POLICY.rules[0]!, max_resource_cost: 0.5 }] };
    expect(compilePolicy(parsePolicy(changed)).hash).not.toBe(a);
  });

  it('property: junk policies never crash; each is a policy or a coded error naming a field', () => {
    const ruleArb = fc.record(
      {
        id: fc.oneof(fc.string(), fc.constantFrom('a', 'b', 'builtin:x')),
        effect: fc.constantFrom('permit', 'deny', 'defer', 'maybe'),
        actions: fc.array(fc.constantFrom('workload.place', 'workload.*', 'workload.x', 5)),
        kinds: fc.array(fc.string()),
        min_node_tier: fc.constantFrom('discovered', 'paired', 'pinned', 'x'),
        max_node_tier: fc.constantFrom('discovered', 'paired', 'pinned'),
        max_resource_cost: fc.double(),
        secrets: fc.anything(),
        accelerators: fc.oneof(fc.constant('*'), fc.array(fc.string())),
      },
      { requiredKeys: ['id', 'effect', 'actions'] },
    );
    const policyArb = fc.oneof(
      fc.anything(),
      fc.record({
        version: fc.constantFrom(1, 2),
        name: fc.string(),
        rules: fc.array(ruleArb, { maxLength: 5 }),
      }),
    );
    fc.assert(
      fc.property(policyArb, (p) => {
        try {
          compilePolicy(parsePolicy(p));
        } catch (e) {
          expect(e).toBeInstanceOf(GateError);
          expect((e as GateError).code).toBe('invalid_policy');
          expect((e as GateError).field).toEqual(expect.any(String));
        }
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          parsePolicyText(text);
        } catch (e) {
          expect(e).toBeInstanceOf(GateError);
          expect(['invalid_policy', 'invalid_policy_json']).toContain((e as GateError).code);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the example JSON is what the docs show (sanity: parses as plain JSON too)', () => {
    expect(JSON.parse(readFileSync(join(examples, 'default.json'), 'utf8')).name).toBe('default');
  });
});
