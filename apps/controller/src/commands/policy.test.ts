import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, HeddleError, toHex } from '@heddle/envelope';
import { RevocationList } from '@heddle/package';
import { describe, expect, it } from 'vitest';
import { CliError } from '../cli-error.js';
import type { CliIo } from '../io.js';
import { policy } from './policy.js';

const DEFAULT = fileURLToPath(new URL('../../../../examples/policies/default.json', import.meta.url));
const APPROVALS = fileURLToPath(
  new URL('../../../../examples/policies/with-approvals.json', import.meta.url),
);

const CTX = {
  kind: 'cog',
  package_trust: 'operator_attested',
  node_tier: 'paired',
  network: 'lan',
  secrets: false,
  emulated: false,
  resource_cost: 0.25,
  package_id: 'acme/sensor@1.0.0',
};

/** `policy check` arguments for a context given as JSON (an action and a policy file). */
const checkArgs = (context: object, action = 'workload.start', policy: string = DEFAULT): string[] => [
  'check',
  '--policy',
  policy,
  '--action',
  action,
  '--context',
  JSON.stringify(context),
];

/** A directory with `rl.json`, a signed revocation list revoking one package id, and `trust.json`. */
function signedList(): { dir: string; pkg: string } {
  const dir = mkdtempSync(join(tmpdir(), 'heddle-policy-'));
  const ops = generateKeyPair();
  const pkg = 'c3'.repeat(32);
  RevocationList.empty()
    .add({ kind: 'package', ref: pkg, revokedAtMs: 1_700_000_000_000, reason: 'leaked' }, ops)
    .save(join(dir, 'rl.json'));
  const trust = {
    schema: 'heddle.trust.v1',
    keys: [{ id: 'ops', role: 'operator', public_key: toHex(ops.publicKey) }],
  };
  writeFileSync(join(dir, 'trust.json'), JSON.stringify(trust));
  return { dir, pkg };
}

/** Runs `heddle policy ...` in process, mapping thrown errors like `runCli` does. */
async function run(args: string[], cwd = mkdtempSync(join(tmpdir(), 'heddle-policy-'))) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), cwd };
  let code: number;
  try {
    code = await policy(args, io);
  } catch (e) {
    if (!(e instanceof HeddleError)) throw e;
    const ce = e instanceof CliError ? e : new CliError(e.code, e.message, 3);
    if (args.includes('--json'))
      err.push(JSON.stringify({ error: { code: ce.code, message: ce.message, field: ce.field } }));
    else err.push(ce.message);
    code = ce.exitCode;
  }
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('heddle policy check', () => {
  it('prints a permit and its deciding rule (exit 0)', async () => {
    const r = await run(checkArgs(CTX, 'workload.place'));
    expect(r.code).toBe(0);
    expect(r.out).toContain('verdict: permit');
    expect(r.out).toContain('rule:    operator-signed-cogs-on-paired-nodes');
  });

  it('prints a deny with the reason (exit 1), and --json gives the decision', async () => {
    const r = await run([...checkArgs(CTX, 'workload.place'), '--node-tier', 'discovered', '--json']);
    expect(r.code).toBe(1);
    const d = JSON.parse(r.out);
    expect(d).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:default_deny',
      action: 'workload.place',
      policy: { name: 'default' },
    });
    expect(d.reason).toContain('node_tier >= paired');
  });

  it('builds the context from flags alone', async () => {
    const r = await run([
      'check',
      '--policy',
      DEFAULT,
      '--action',
      'workload.start',
      '--kind',
      'cog',
      '--package-trust',
      'pinned_signer',
      '--node-tier',
      'pinned',
      '--network',
      'none',
      '--secrets',
      'false',
      '--emulated',
      'false',
      '--resource-cost',
      '0.5',
      '--package-id',
      'p',
      '--signer-keys',
      'aa,bb',
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).verdict).toBe('permit');
  });

  it('dry-runs the teardown waiver and prints what was waived', async () => {
    const args = checkArgs({ workload: { ...CTX, node_tier: 'discovered' } }, 'workload.stop');
    expect((await run(args)).code).toBe(1);
    const r = await run([...args, '--teardown']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/waiver: +builtin:default_deny waived \(node tier discovered, decided as pinned\)/);
  });

  it('prints a defer (exit 1) and an --explain trace', async () => {
    const r = await run([
      ...checkArgs({ ...CTX, network: 'egress' }, 'workload.place', APPROVALS),
      '--explain',
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('verdict: defer');
    expect(r.out).toContain('rule:    egress-needs-an-operator');
    expect(r.out).toMatch(/no-unsigned +deny +no_match +needs package_trust <= unsigned/);
  });

  it('applies the signed revocation list heddle revoke writes (--revocations with --trust)', async () => {
    const { dir, pkg } = signedList();
    const r = await run(
      [
        ...checkArgs({ ...CTX, package_id: pkg.toUpperCase() }),
        '--revocations',
        'rl.json',
        '--trust',
        'trust.json',
        '--json',
      ],
      dir,
    );
    expect(r.code, r.err).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:revoked',
      reason: `package id ${pkg} is revoked: leaked`,
      revocations: { generation: 1, entries: 1 },
    });
    const ok = await run([...checkArgs(CTX), '--revocations', 'rl.json', '--trust', 'trust.json'], dir);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('revocations: ');
  });

  it('fails closed on a revocation list it cannot verify: missing, tampered, untrusted, or the old unsigned format', async () => {
    const { dir } = signedList();
    const tampered = JSON.parse(readFileSync(join(dir, 'rl.json'), 'utf8'));
    tampered.entries = [];
    writeFileSync(join(dir, 'tampered.json'), JSON.stringify(tampered));
    writeFileSync(join(dir, 'old.json'), JSON.stringify({ package_ids: [CTX.package_id] }));
    writeFileSync(
      join(dir, 'other-trust.json'),
      JSON.stringify({
        schema: 'heddle.trust.v1',
        keys: [{ id: 'x', role: 'operator', public_key: toHex(generateKeyPair().publicKey) }],
      }),
    );
    for (const [list, trust] of [
      ['missing.json', 'trust.json'],
      ['tampered.json', 'trust.json'],
      ['old.json', 'trust.json'],
      ['rl.json', 'other-trust.json'],
    ]) {
      const r = await run([...checkArgs(CTX), '--revocations', list!, '--trust', trust!], dir);
      expect(r.code, list).toBe(1);
      expect(r.out).toContain('verdict: deny');
      expect(r.out).toContain('rule:    builtin:revocations_unavailable');
      expect(r.out).toContain('revocations: UNUSABLE, failing closed');
    }
  });

  it('--revocations needs --trust (usage error)', async () => {
    const { dir } = signedList();
    const r = await run([...checkArgs(CTX), '--revocations', 'rl.json'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--revocations needs --trust');
  });

  it('denies an action that is not one of the eight', async () => {
    const r = await run([...checkArgs(CTX, 'workload.reboot'), '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ rule: 'builtin:unknown_action' });
  });

  it('refuses a malformed context with the field named (exit 3)', async () => {
    const bad = await run([...checkArgs({ ...CTX, node_tier: 'root' }, 'workload.place'), '--json']);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.err)).toMatchObject({ error: { code: 'invalid_context', field: 'node_tier' } });
    const missing = await run([
      'check',
      '--policy',
      DEFAULT,
      '--action',
      'workload.place',
      '--kind',
      'cog',
      '--json',
    ]);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.err).error.field).toBe('package_trust');
    const cost = await run([...checkArgs(CTX, 'workload.place'), '--resource-cost', 'lots', '--json']);
    expect(JSON.parse(cost.err)).toMatchObject({
      error: { code: 'invalid_context', field: 'resource_cost' },
    });
    const json = await run([
      'check',
      '--policy',
      DEFAULT,
      '--action',
      'workload.place',
      '--context',
      '{"kind":',
      '--json',
    ]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.err).error.code).toBe('invalid_json');
  });

  it('refuses usage errors with exit 2', async () => {
    expect((await run(['check', '--action', 'workload.place'])).code).toBe(2);
    expect((await run(['check', '--policy', DEFAULT])).code).toBe(2);
    expect((await run(['check', '--policy', DEFAULT, '--action', 'x', '--bogus'])).code).toBe(2);
    expect((await run(['check', '--policy', DEFAULT, '--action', 'x', '--secrets', 'maybe'])).code).toBe(2);
    expect((await run(['frobnicate'])).code).toBe(2);
    expect((await run([])).code).toBe(2);
  });
});

describe('heddle policy validate', () => {
  it('accepts the example policies', async () => {
    const r = await run(['validate', DEFAULT, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ valid: true, name: 'default', rules: 2, permit: 2 });
    expect((await run(['validate', APPROVALS])).out).toMatch(/valid policy "with-approvals"/);
  });

  it('lists every field-level problem (exit 3)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heddle-policy-'));
    writeFileSync(
      join(dir, 'bad.json'),
      JSON.stringify({
        version: 1,
        name: 'bad',
        rules: [{ id: 'a', effect: 'allow', actions: ['workload.place'], min_node_tier: 'gold' }],
      }),
    );
    const r = await run(['validate', 'bad.json', '--json'], dir);
    expect(r.code).toBe(3);
    const res = JSON.parse(r.out);
    expect(res).toMatchObject({ valid: false, code: 'invalid_policy' });
    expect(res.issues.map((i: { field: string }) => i.field)).toEqual([
      'rules[0].effect',
      'rules[0].min_node_tier',
    ]);
    const human = await run(['validate', 'bad.json'], dir);
    expect(human.out).toContain('rules[0].min_node_tier:');
  });

  it('refuses a missing file (exit 3) and a wrong argument count (exit 2)', async () => {
    const r = await run(['validate', 'nope.json', '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.err).error.code).toBe('policy_unreadable');
    expect((await run(['validate'])).code).toBe(2);
  });
});
