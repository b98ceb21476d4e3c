import { NETWORK_LEVELS, NODE_TIERS } from '@heddle/model';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePolicy } from './compile.js';
import type { GateContext } from './context.js';
import { decide, decideTeardown, evaluate } from './decide.js';
import { DEFAULT_POLICY } from './default-policy.js';
import { explain } from './explain.js';
import { ACTIONS, type Action, PACKAGE_TRUST_LEVELS } from './levels.js';
import type { Policy, PolicyRule } from './policy.js';
import { parsePolicy } from './policy.js';
import { RevocationSet } from './revocation.js';
import { BASE, ctx, policyOf } from './test-util.js';

const none = new RevocationSet();
const PLACE: Action = 'workload.place';

function verdict(
  rule: Partial<PolicyRule>,
  c: GateContext,
  action: Action = PLACE,
  agent = 'controller',
): string {
  const full = { id: 'r', effect: 'permit', actions: [PLACE], ...rule } as PolicyRule;
  const compiled = compilePolicy(parsePolicy(policyOf(full)));
  return decide(compiled, none, agent, action, c).verdict;
}

describe('permit rule fields', () => {
  // [field, rule fragment, context that matches, context that does not]
  const table: [string, Partial<PolicyRule>, Partial<GateContext>, Partial<GateContext>][] = [
    ['actions', { actions: ['workload.place'] }, {}, {}],
    ['kinds', { kinds: ['cog', 'wasi'] }, { kind: 'wasi' }, { kind: 'inference' }],
    [
      'min_package_trust',
      { min_package_trust: 'operator_attested' },
      { package_trust: 'pinned_signer' },
      { package_trust: 'signed_unpinned' },
    ],
    [
      'max_package_trust',
      { max_package_trust: 'signed_unpinned' },
      { package_trust: 'project_cert' },
      { package_trust: 'operator_attested' },
    ],
    ['min_node_tier', { min_node_tier: 'paired' }, { node_tier: 'pinned' }, { node_tier: 'discovered' }],
    ['max_node_tier', { max_node_tier: 'paired' }, { node_tier: 'discovered' }, { node_tier: 'pinned' }],
    ['min_network', { min_network: 'lan' }, { network: 'egress' }, { network: 'none' }],
    ['max_network', { max_network: 'lan' }, { network: 'none' }, { network: 'egress' }],
    ['secrets (default: not allowed)', {}, { secrets: false }, { secrets: true, node_tier: 'pinned' }],
    [
      'secrets: true allows both',
      { secrets: true },
      { secrets: true, node_tier: 'pinned' },
      { kind: 'x', secrets: true },
    ],
    ['emulated (default: not allowed)', {}, { emulated: false }, { emulated: true }],
    ['emulated: true allows both', { emulated: true }, { emulated: true }, { kind: 'x' }],
    ['accelerators (default: none)', {}, {}, { accelerator: 'hailo8' }],
    ['accelerators list', { accelerators: ['hailo8'] }, { accelerator: 'hailo8' }, { accelerator: 'cuda' }],
    ['accelerators *', { accelerators: '*' }, { accelerator: 'cuda' }, { kind: 'x' }],
    ['min_resource_cost', { min_resource_cost: 0.5 }, { resource_cost: 0.5 }, { resource_cost: 0.4999 }],
    ['max_resource_cost', { max_resource_cost: 0.5 }, { resource_cost: 0.5 }, { resource_cost: 0.5001 }],
  ];
  it.each(table)('%s', (_name, rule, yes, no) => {
    const r = { kinds: ['cog', 'wasi', 'inference'], ...rule };
    expect(verdict(r, ctx(yes))).toBe('permit');
    if (Object.keys(no).length > 0) expect(verdict(r, ctx(no))).toBe('deny');
  });

  it('actions: a rule covers only its actions; workload.* covers all eight', () => {
    expect(verdict({ actions: ['workload.start'] }, BASE, 'workload.place')).toBe('deny');
    for (const a of ACTIONS) expect(verdict({ actions: ['workload.*'] }, BASE, a)).toBe('permit');
  });

  it('agents: only the named agents', () => {
    expect(verdict({ agents: ['controller'] }, BASE, PLACE, 'controller')).toBe('permit');
    expect(verdict({ agents: ['controller'] }, BASE, PLACE, 'someone-else')).toBe('deny');
  });

  it('a context without an accelerator passes a permit listing accelerators', () => {
    expect(verdict({ accelerators: ['hailo8'] }, BASE)).toBe('permit');
  });

  it('costs are compared in basis points (0.50004 rounds to 0.5)', () => {
    expect(verdict({ max_resource_cost: 0.5 }, ctx({ resource_cost: 0.50004 }))).toBe('permit');
    expect(verdict({ max_resource_cost: 0.5 }, ctx({ resource_cost: 0.50006 }))).toBe('deny');
  });
});

describe('deny and defer rule fields are selectors', () => {
  const base: PolicyRule = {
    id: 'ok',
    effect: 'permit',
    actions: ['workload.*'],
    secrets: true,
    emulated: true,
    accelerators: '*',
  };
  const run = (rule: Partial<PolicyRule>, c: Partial<GateContext>): string => {
    const pol = policyOf({ id: 'x', effect: 'deny', actions: ['workload.*'], ...rule } as PolicyRule, base);
    return decide(compilePolicy(parsePolicy(pol)), none, 'a', PLACE, ctx({ node_tier: 'pinned', ...c }))
      .verdict;
  };
  it.each<[string, Partial<PolicyRule>, Partial<GateContext>, Partial<GateContext>]>([
    ['secrets: true', { secrets: true }, { secrets: true }, { secrets: false }],
    ['secrets: false', { secrets: false }, { secrets: false }, { secrets: true }],
    ['emulated: true', { emulated: true }, { emulated: true }, { emulated: false }],
    ['accelerators list', { accelerators: ['cuda'] }, { accelerator: 'cuda' }, {}],
    ['accelerators *', { accelerators: '*' }, { accelerator: 'hailo8' }, {}],
    ['omitted matches anything', {}, { secrets: true, emulated: true, accelerator: 'x' }, { kind: 'y' }],
    [
      'max_package_trust',
      { max_package_trust: 'unsigned' },
      { package_trust: 'unsigned' },
      { package_trust: 'project_cert' },
    ],
    ['min_resource_cost', { min_resource_cost: 0.75 }, { resource_cost: 0.8 }, { resource_cost: 0.7 }],
  ])('%s', (name, rule, hit, miss) => {
    expect(run(rule, hit)).toBe('deny');
    if (name !== 'omitted matches anything') expect(run(rule, miss)).toBe('permit');
  });
});

describe('evaluation order', () => {
  const permitAll: PolicyRule = {
    id: 'all',
    effect: 'permit',
    actions: ['workload.*'],
    secrets: true,
    emulated: true,
    accelerators: '*',
  };
  const compiled = compilePolicy(parsePolicy(policyOf(permitAll)));

  it('a revoked package id, signer key or artifact hash denies first, even with a permit', () => {
    for (const [input, field] of [
      [{ package_ids: [BASE.package_id] }, 'package id'],
      [{ signer_keys: [BASE.signer_keys[0]!.toUpperCase()] }, 'signer key'],
      [{ artifact_hashes: [BASE.artifact_hashes[0]!] }, 'artifact hash'],
    ] as const) {
      const d = decide(compiled, new RevocationSet(input), 'a', PLACE, ctx({ secrets: true }));
      expect(d).toMatchObject({ verdict: 'deny', rule: 'builtin:revoked' });
      expect(d.reason).toContain(field);
    }
  });

  it('secrets need a pinned node, before any rule', () => {
    expect(decide(compiled, none, 'a', PLACE, ctx({ secrets: true, node_tier: 'paired' }))).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:secrets_need_pinned',
    });
    expect(decide(compiled, none, 'a', PLACE, ctx({ secrets: true, node_tier: 'pinned' })).verdict).toBe(
      'permit',
    );
  });

  it('a matching deny beats defer beats permit, whatever their order in the file', () => {
    const deny: PolicyRule = { id: 'd', effect: 'deny', actions: [PLACE], reason: 'no' };
    const defer: PolicyRule = { id: 'f', effect: 'defer', actions: [PLACE], reason: 'ask' };
    for (const rules of [
      [permitAll, defer, deny],
      [deny, defer, permitAll],
      [defer, permitAll, deny],
    ]) {
      expect(decide(compilePolicy(policyOf(...rules)), none, 'a', PLACE, BASE)).toEqual({
        verdict: 'deny',
        rule: 'd',
        reason: 'no',
      });
    }
    expect(decide(compilePolicy(policyOf(permitAll, defer)), none, 'a', PLACE, BASE)).toEqual({
      verdict: 'defer',
      rule: 'f',
      reason: 'ask',
    });
  });

  it('among rules of one effect the first in file order decides', () => {
    const p1: PolicyRule = { ...permitAll, id: 'p1' };
    const p2: PolicyRule = { ...permitAll, id: 'p2' };
    expect(decide(compilePolicy(policyOf(p1, p2)), none, 'a', PLACE, BASE).rule).toBe('p1');
    expect(decide(compilePolicy(policyOf(p2, p1)), none, 'a', PLACE, BASE).rule).toBe('p2');
  });

  it('otherwise deny, naming the nearest permits and what they failed', () => {
    const d = decide(compilePolicy(DEFAULT_POLICY), none, 'a', PLACE, ctx({ node_tier: 'discovered' }));
    expect(d.verdict).toBe('deny');
    expect(d.rule).toBe('builtin:default_deny');
    expect(d.reason).toContain(
      'operator-signed-cogs-on-paired-nodes needs node_tier >= paired (is discovered)',
    );
    const empty = decide(compilePolicy(policyOf()), none, 'a', PLACE, BASE);
    expect(empty).toMatchObject({ verdict: 'deny', rule: 'builtin:default_deny' });
    expect(empty.reason).toContain('no permit rule covers workload.place');
  });

  it('unknown actions, invalid agents and invalid contexts are denied with the field named', () => {
    const c = compilePolicy(policyOf(permitAll));
    expect(evaluate(c, none, 'a', 'workload.reboot', BASE).decision).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:unknown_action',
      field: 'action',
    });
    expect(evaluate(c, none, 'a', 'net.connect', BASE).decision.rule).toBe('builtin:unknown_action');
    expect(evaluate(c, none, '', PLACE, BASE).decision).toMatchObject({
      rule: 'builtin:invalid_agent',
      field: 'agent',
    });
    expect(evaluate(c, none, 'a', PLACE, { ...BASE, node_tier: 'god' }).decision).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:invalid_context',
      field: 'node_tier',
    });
  });
});

describe('default policy', () => {
  const c = compilePolicy(DEFAULT_POLICY);
  it('permits operator-signed cogs on paired nodes without secrets or emulation, network at most lan', () => {
    for (const a of ACTIONS) expect(decide(c, none, 'a', a, BASE).verdict, a).toBe('permit');
    for (const over of [
      { kind: 'inference' },
      { package_trust: 'signed_unpinned' },
      { node_tier: 'discovered' },
      { network: 'egress' },
      { emulated: true },
      { secrets: true, node_tier: 'pinned' },
      { accelerator: 'hailo8' },
    ]) {
      expect(decide(c, none, 'a', PLACE, ctx(over)).verdict, JSON.stringify(over)).toBe('deny');
    }
  });
});

describe('teardown waiver', () => {
  const c = compilePolicy(DEFAULT_POLICY);
  const demoted = ctx({ node_tier: 'discovered' });

  it('waives a denial caused by the node tier alone, for stop and unload, and says what was waived', () => {
    for (const a of ['workload.stop', 'workload.unload'] as const) {
      expect(decide(c, none, 'a', a, demoted).verdict).toBe('deny');
      const d = decideTeardown(c, none, 'a', a, demoted);
      expect(d).toMatchObject({
        verdict: 'permit',
        rule: 'operator-signed-cogs-on-paired-nodes',
        waiver: { waived_rule: 'builtin:default_deny', node_tier: 'discovered', decided_as: 'pinned' },
      });
      expect(d.verdict === 'permit' && d.waiver?.waived_reason).toContain('node_tier >= paired');
    }
  });

  it('waives the secrets-need-pinned denial too (it is a tier denial)', () => {
    const pol = compilePolicy(
      policyOf({ id: 's', effect: 'permit', actions: ['workload.stop'], secrets: true }),
    );
    const d = decideTeardown(pol, none, 'a', 'workload.stop', ctx({ secrets: true }));
    expect(d).toMatchObject({ verdict: 'permit', waiver: { waived_rule: 'builtin:secrets_need_pinned' } });
  });

  it('does not waive other actions, other causes, revocations or defers', () => {
    expect(decideTeardown(c, none, 'a', 'workload.start', demoted).verdict).toBe('deny');
    expect(decideTeardown(c, none, 'a', 'workload.load', demoted).verdict).toBe('deny');
    expect(
      decideTeardown(c, none, 'a', 'workload.stop', ctx({ node_tier: 'discovered', network: 'egress' }))
        .verdict,
    ).toBe('deny');
    const revoked = new RevocationSet({ package_ids: [BASE.package_id] });
    expect(decideTeardown(c, revoked, 'a', 'workload.stop', demoted)).toMatchObject({
      rule: 'builtin:revoked',
    });
    const deferDiscovered = compilePolicy(
      policyOf(
        { id: 'ask', effect: 'defer', actions: ['workload.stop'], max_node_tier: 'discovered' },
        { id: 'ok', effect: 'permit', actions: ['workload.stop'] },
      ),
    );
    expect(decideTeardown(deferDiscovered, none, 'a', 'workload.stop', demoted).verdict).toBe('defer');
  });

  it('waives an explicit deny rule that names the tier', () => {
    const p = compilePolicy(
      policyOf(
        { id: 'no-discovered', effect: 'deny', actions: ['workload.*'], max_node_tier: 'discovered' },
        { id: 'ok', effect: 'permit', actions: ['workload.*'] },
      ),
    );
    expect(decideTeardown(p, none, 'a', 'workload.unload', demoted)).toMatchObject({
      verdict: 'permit',
      rule: 'ok',
      waiver: { waived_rule: 'no-discovered' },
    });
  });

  it('leaves permits and pinned nodes alone (no waiver recorded)', () => {
    expect(decideTeardown(c, none, 'a', 'workload.stop', BASE)).not.toHaveProperty('waiver');
    expect(
      decideTeardown(c, none, 'a', 'workload.stop', ctx({ node_tier: 'pinned', network: 'egress' })).verdict,
    ).toBe('deny');
  });
});

describe('explain', () => {
  it('traces the built-in steps and every rule in file order', () => {
    const pol: Policy = parsePolicy(
      policyOf(
        { id: 'starts', effect: 'permit', actions: ['workload.start'] },
        { id: 'tier', effect: 'permit', actions: [PLACE], min_node_tier: 'pinned' },
        { id: 'yes', effect: 'permit', actions: [PLACE] },
      ),
    );
    const t = explain(compilePolicy(pol), none, 'a', PLACE, BASE);
    expect(t.map((r) => [r.rule, r.result])).toEqual([
      ['builtin:revoked', 'no_match'],
      ['builtin:secrets_need_pinned', 'no_match'],
      ['starts', 'not_applicable'],
      ['tier', 'no_match'],
      ['yes', 'match'],
    ]);
    expect(t[3]).toMatchObject({ failed: 'min_node_tier', detail: 'needs node_tier >= pinned (is paired)' });
    expect(explain(compilePolicy(pol), none, 'a', 'bogus', BASE)[0]).toMatchObject({
      rule: 'builtin:unknown_action',
    });
    expect(explain(compilePolicy(pol), none, 'a', PLACE, {})[0]).toMatchObject({
      rule: 'builtin:invalid_context',
    });
  });
});

describe('properties', () => {
  const contextArb: fc.Arbitrary<GateContext> = fc.record({
    kind: fc.constantFrom('cog', 'inference', 'wasi'),
    package_trust: fc.constantFrom(...PACKAGE_TRUST_LEVELS),
    node_tier: fc.constantFrom(...NODE_TIERS),
    network: fc.constantFrom(...NETWORK_LEVELS),
    secrets: fc.boolean(),
    emulated: fc.boolean(),
    resource_cost: fc.double({ min: 0, max: 1, noNaN: true }),
    package_id: fc.constantFrom('p1', 'p2'),
    signer_keys: fc.constant([] as string[]),
    artifact_hashes: fc.constant([] as string[]),
  });
  const ruleArb: fc.Arbitrary<PolicyRule> = fc.record(
    {
      id: fc.constant('x'),
      effect: fc.constantFrom('permit', 'deny', 'defer'),
      actions: fc.subarray([...ACTIONS], { minLength: 1 }),
      kinds: fc.subarray(['cog', 'inference', 'wasi'], { minLength: 1 }),
      min_package_trust: fc.constantFrom(...PACKAGE_TRUST_LEVELS),
      min_node_tier: fc.constantFrom(...NODE_TIERS),
      max_network: fc.constantFrom(...NETWORK_LEVELS),
      secrets: fc.boolean(),
      emulated: fc.boolean(),
      max_resource_cost: fc.double({ min: 0, max: 1, noNaN: true }),
    },
    { requiredKeys: ['id', 'effect', 'actions'] },
  );
  const policyArb = fc
    .array(ruleArb, { maxLength: 12 })
    .map((rules) => policyOf(...rules.map((r, i) => ({ ...r, id: `r${i}` }))));

  it('decisions are deterministic and independent of the order of rules of different effects', () => {
    fc.assert(
      fc.property(policyArb, contextArb, fc.constantFrom(...ACTIONS), (pol, c, a) => {
        const compiled = compilePolicy(parsePolicy(pol));
        const d1 = decide(compiled, none, 'a', a, c);
        expect(decide(compilePolicy(parsePolicy(pol)), none, 'a', a, c)).toEqual(d1);
        // Moving all permits to the front changes nothing: precedence is by effect.
        const reordered = policyOf(
          ...pol.rules.filter((r) => r.effect === 'permit'),
          ...pol.rules.filter((r) => r.effect !== 'permit'),
        );
        expect(decide(compilePolicy(reordered), none, 'a', a, c)).toEqual(d1);
      }),
      { numRuns: 400 },
    );
  });

  it('a permit is always backed by a permit rule that matches; never when revoked or secrets off-pinned', () => {
    fc.assert(
      fc.property(policyArb, contextArb, fc.constantFrom(...ACTIONS), fc.boolean(), (pol, c, a, rev) => {
        const compiled = compilePolicy(parsePolicy(pol));
        const revs = new RevocationSet(rev ? { package_ids: ['p1'] } : {});
        const d = decideTeardown(compiled, revs, 'a', a, c);
        if (d.verdict !== 'permit') return;
        expect(rev && c.package_id === 'p1').toBe(false);
        if (!d.waiver) expect(c.secrets && c.node_tier !== 'pinned').toBe(false);
        const rule = pol.rules.find((r) => r.id === d.rule);
        expect(rule?.effect).toBe('permit');
        const tr = explain(compiled, revs, 'a', a, d.waiver ? { ...c, node_tier: 'pinned' } : c);
        expect(tr.find((t) => t.rule === d.rule)?.result).toBe('match');
      }),
      { numRuns: 400 },
    );
  });

  it('junk requests never throw and are always denied with a builtin rule', () => {
    const compiled = compilePolicy(DEFAULT_POLICY);
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (agent, action, context) => {
        const { decision } = evaluate(compiled, none, agent, action, context, true);
        expect(decision.verdict).toBe('deny');
        expect(decision.rule.startsWith('builtin:')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
