// Gate checks per second with a realistic 20-rule policy, against a baseline measured in the same run:
// a plain loop evaluating the same predicates over the same rules on pre-parsed objects (ranks
// precomputed; no validation, no reasons, no recording). Figures: the gate's pure decision on a
// validated context; a full evaluation of an untrusted context (validation included: a hand-written
// fast path for well-formed contexts, zod for the rest); and Gate.check (validation, decision, the
// chained payload built and handed to a no-op recorder, one await per check).
import {
  ACTIONS,
  compilePolicy,
  decide,
  evaluate,
  Gate,
  PACKAGE_TRUST_LEVELS,
  parsePolicy,
  RevocationSet,
} from '@heddle/gate';
import { NETWORK_LEVELS, NODE_TIERS } from '@heddle/model';
import { bestOf, opsPerSecond, report } from './harness.mjs';

const TRUST = PACKAGE_TRUST_LEVELS;
const TIERS = NODE_TIERS;
const NETS = NETWORK_LEVELS;
const KINDS = ['cog', 'wasi', 'inference', 'container', 'project'];

// 20 rules: 2 deny, 3 defer, 15 permit, spread over actions and kinds.
const rules = [
  { id: 'no-unsigned', effect: 'deny', actions: ['workload.*'], max_package_trust: 'unsigned' },
  {
    id: 'no-emulated-inference',
    effect: 'deny',
    actions: ['workload.place', 'workload.load'],
    kinds: ['inference'],
    emulated: true,
  },
  {
    id: 'egress-asks',
    effect: 'defer',
    actions: ['workload.place', 'workload.start'],
    min_network: 'egress',
    kinds: ['container'],
  },
  {
    id: 'heavy-asks',
    effect: 'defer',
    actions: ['workload.place', 'workload.migrate'],
    min_resource_cost: 0.9,
  },
  { id: 'secrets-ask', effect: 'defer', actions: ['workload.load'], secrets: true, kinds: ['container'] },
  {
    id: 'revoke',
    effect: 'permit',
    actions: ['workload.revoke'],
    secrets: true,
    emulated: true,
    accelerators: '*',
  },
];
const SEVEN = ACTIONS.slice(0, 7);
for (let i = 0; i < 14; i++) {
  rules.push({
    id: `permit-${i}`,
    effect: 'permit',
    actions: i % 2 === 0 ? SEVEN : SEVEN.slice(i % 4, (i % 4) + 3),
    kinds: [[KINDS[0]], [KINDS[0], KINDS[1]], [KINDS[2]], [KINDS[3]], [KINDS[1], KINDS[4]]][i % 5],
    min_package_trust: TRUST[i % 4 === 3 ? 2 : 3],
    min_node_tier: TIERS[i % 5 === 4 ? 2 : 1],
    max_network: NETS[1 + (i % 2)],
    secrets: i % 5 === 0,
    emulated: i % 3 === 0,
    ...(i % 4 === 0 ? { accelerators: ['hailo8', 'cuda'] } : {}),
    max_resource_cost: 0.6 + (i % 5) / 10,
  });
}
const policy = parsePolicy({ version: 1, name: 'bench', rules });
const compiled = compilePolicy(policy);
const revocations = new RevocationSet({ package_ids: ['revoked-pkg'], signer_keys: ['ff'.repeat(32)] });

// 256 varied requests, weighted like a real fleet: mostly operator-signed packages on paired or
// pinned nodes, some untrusted ones, the odd revoked package, secrets and emulation now and then.
let seed = 42;
const rnd = (n) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
const pick = (list, weights) => {
  let x = rnd(weights.reduce((a, b) => a + b, 0));
  for (let i = 0; i < list.length; i++) {
    x -= weights[i];
    if (x < 0) return list[i];
  }
  return list[0];
};
const requests = [];
for (let i = 0; i < 256; i++) {
  const accel = rnd(10) === 0 ? ['hailo8', 'cuda', 'metal'][rnd(3)] : undefined;
  requests.push({
    action: pick(ACTIONS, [2, 6, 4, 6, 4, 3, 2, 1]),
    context: {
      kind: pick(KINDS, [6, 3, 2, 2, 1]),
      package_trust: pick(TRUST, [1, 1, 2, 8, 6]),
      node_tier: pick(TIERS, [2, 6, 5]),
      network: pick(NETS, [3, 6, 1]),
      secrets: rnd(20) === 0,
      emulated: rnd(12) === 0,
      ...(accel ? { accelerator: accel } : {}),
      resource_cost: (rnd(1000) / 1000) ** 2,
      package_id: rnd(50) === 0 ? 'revoked-pkg' : `acme/pkg-${rnd(20)}@1.0.0`,
      signer_keys: ['a1'.repeat(32)],
      artifact_hashes: ['b2'.repeat(32), 'c3'.repeat(32)],
    },
  });
}
const parsed = requests.map(
  (r) => evaluate(compiled, revocations, 'controller', r.action, r.context).context,
);

// Baseline: the same rules as plain objects, the same predicates, contexts pre-parsed with ranks.
const rank = (list, v) => list.indexOf(v);
const EFF = { deny: 0, defer: 1, permit: 2 };
const plainRules = rules
  .map((r, index) => ({
    index,
    id: r.id,
    effect: r.effect,
    actions: new Set(r.actions.includes('workload.*') ? ACTIONS : r.actions),
    kinds: r.kinds ? new Set(r.kinds) : null,
    minTrust: r.min_package_trust ? rank(TRUST, r.min_package_trust) : 0,
    maxTrust: r.max_package_trust ? rank(TRUST, r.max_package_trust) : 99,
    minTier: r.min_node_tier ? rank(TIERS, r.min_node_tier) : 0,
    minNet: r.min_network ? rank(NETS, r.min_network) : 0,
    maxNet: r.max_network ? rank(NETS, r.max_network) : 99,
    secrets: r.effect === 'permit' ? (r.secrets ? null : false) : (r.secrets ?? null),
    emulated: r.effect === 'permit' ? (r.emulated ? null : false) : (r.emulated ?? null),
    accel:
      r.accelerators === '*'
        ? null
        : r.accelerators
          ? new Set(r.accelerators)
          : r.effect === 'permit'
            ? new Set()
            : null,
    minCost: Math.round((r.min_resource_cost ?? 0) * 10000),
    maxCost: Math.round((r.max_resource_cost ?? 9.9999) * 10000),
  }))
  .sort((a, b) => EFF[a.effect] - EFF[b.effect] || a.index - b.index);
const revokedIds = new Set(['revoked-pkg']);
const revokedKeys = new Set(['ff'.repeat(32)]);
const pre = requests.map((r, i) => {
  const c = parsed[i];
  return {
    action: r.action,
    c,
    trust: rank(TRUST, c.package_trust),
    tier: rank(TIERS, c.node_tier),
    net: rank(NETS, c.network),
    cost: Math.round(c.resource_cost * 10000),
  };
});
function baseline(p) {
  const c = p.c;
  if (revokedIds.has(c.package_id)) return 'deny';
  for (const k of c.signer_keys) if (revokedKeys.has(k)) return 'deny';
  if (c.secrets && p.tier !== 2) return 'deny';
  for (const r of plainRules) {
    if (!r.actions.has(p.action)) continue;
    if (r.kinds !== null && !r.kinds.has(c.kind)) continue;
    if (p.trust < r.minTrust || p.trust > r.maxTrust || p.tier < r.minTier) continue;
    if (p.net < r.minNet || p.net > r.maxNet) continue;
    if (r.secrets !== null && c.secrets !== r.secrets) continue;
    if (r.emulated !== null && c.emulated !== r.emulated) continue;
    if (r.accel !== null && c.accelerator !== undefined && !r.accel.has(c.accelerator)) continue;
    if (p.cost < r.minCost || p.cost > r.maxCost) continue;
    return r.effect;
  }
  return 'deny';
}

// Sanity: the baseline and the gate agree on every request (cheap deny reasons aside).
const verdicts = { permit: 0, deny: 0, defer: 0 };
for (let i = 0; i < requests.length; i++) {
  const g = decide(compiled, revocations, 'controller', requests[i].action, parsed[i]).verdict;
  const b = baseline(pre[i]);
  if (g !== b) console.warn(`  note: request ${i} baseline ${b} vs gate ${g}`);
  verdicts[g]++;
}

let k = 0;
let sink = 0;
const base = bestOf(5, () =>
  opsPerSecond(() => {
    sink += baseline(pre[k++ & 255]).length;
  }, 500),
);
const pure = bestOf(5, () =>
  opsPerSecond(() => {
    sink += decide(compiled, revocations, 'controller', requests[k & 255].action, parsed[k++ & 255]).verdict
      .length;
  }, 500),
);
const full = bestOf(5, () =>
  opsPerSecond(() => {
    sink += evaluate(
      compiled,
      revocations,
      'controller',
      requests[k & 255].action,
      requests[k++ & 255].context,
    ).decision.verdict.length;
  }, 500),
);

const recorder = { append: async () => ({ hash: '0'.repeat(64) }) };
const gate = new Gate({ policy, recorder, revocations });
async function checksPerSecond(ms) {
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    for (let i = 0; i < 256; i++) {
      const r = requests[k++ & 255];
      sink += (await gate.check('controller', r.action, r.context)).verdict.length;
    }
    n += 256;
  }
  return n / ((performance.now() - start) / 1000);
}
await checksPerSecond(200);
let checked = 0;
for (let i = 0; i < 5; i++) checked = Math.max(checked, await checksPerSecond(500));

report(
  `gate: 20-rule policy, 256 varied requests (${verdicts.permit} permit, ${verdicts.deny} deny, ${verdicts.defer} defer)`,
  [
    ['baseline: plain predicate loop', base, 'checks/s', 1],
    ['decide (validated context)', pure, 'checks/s', pure / base],
    ['evaluate (untrusted context, validated)', full, 'checks/s', full / base],
    ['Gate.check (validate+decide+payload)', checked, 'checks/s', checked / base],
  ],
);
if (sink === 0) console.log('');
