import type { RevocationCheck, RevocationRefs } from '@heddle/model';
import { describe, expect, it } from 'vitest';
import { compilePolicy } from './compile.js';
import { evaluate } from './decide.js';
import { DEFAULT_POLICY } from './default-policy.js';
import { explain } from './explain.js';
import { Gate } from './gate.js';
import { ACTIONS } from './levels.js';
import { RevocationSet } from './revocation.js';
import { BASE, ctx, TestRecorder } from './test-util.js';

const compiled = compilePolicy(DEFAULT_POLICY);
const PKG = 'ab'.repeat(32);

describe('revocations: any structural RevocationCheck', () => {
  it('asks the check with the context references and denies what it names (builtin:revoked)', () => {
    const seen: RevocationRefs[] = [];
    const check: RevocationCheck = {
      firstRevoked(refs) {
        seen.push(refs);
        return { kind: 'signer', ref: refs.signerKeys[0]!, reason: 'key leaked' };
      },
    };
    const { decision } = evaluate(compiled, check, 'a', 'workload.start', ctx({ package_id: PKG }));
    expect(seen).toEqual([
      { packageId: PKG, signerKeys: BASE.signer_keys, artifactHashes: BASE.artifact_hashes },
    ]);
    expect(decision).toEqual({
      verdict: 'deny',
      rule: 'builtin:revoked',
      reason: `signer key ${BASE.signer_keys[0]} is revoked: key leaked`,
    });
  });

  it('fails closed when the list is unavailable: every action is denied (builtin:revocations_unavailable)', async () => {
    const check: RevocationCheck = {
      firstRevoked: () => ({
        kind: 'list-unavailable',
        ref: '*',
        reason: 'signature: invalid list signature',
      }),
    };
    for (const action of ACTIONS) {
      for (const teardown of [false, true]) {
        const { decision } = evaluate(compiled, check, 'a', action, ctx({ node_tier: 'pinned' }), teardown);
        expect(decision).toMatchObject({ verdict: 'deny', rule: 'builtin:revocations_unavailable' });
        expect(decision.reason).toContain('signature: invalid list signature');
      }
    }
    const recorder = new TestRecorder();
    const gate = new Gate({ policy: DEFAULT_POLICY, recorder, revocations: check });
    expect(await gate.checkTeardown('a', 'workload.stop', ctx({ node_tier: 'discovered' }))).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:revocations_unavailable',
    });
    expect(explain(compiled, check, 'a', 'workload.start', BASE)[0]).toMatchObject({
      rule: 'builtin:revocations_unavailable',
      result: 'match',
      failed: 'revocations',
    });
  });

  it('a check that throws fails closed too', () => {
    const check: RevocationCheck = {
      firstRevoked: () => {
        throw new Error('disk gone');
      },
    };
    expect(evaluate(compiled, check, 'a', 'workload.start', BASE).decision).toMatchObject({
      verdict: 'deny',
      rule: 'builtin:revocations_unavailable',
      reason: expect.stringContaining('disk gone'),
    });
  });

  it('RevocationSet is a RevocationCheck; failedClosed() revokes everything', () => {
    const set = new RevocationSet({ artifact_hashes: [BASE.artifact_hashes[0]!] });
    expect(
      set.firstRevoked({ signerKeys: [], artifactHashes: [BASE.artifact_hashes[0]!.toUpperCase()] }),
    ).toEqual({ kind: 'artifact', ref: BASE.artifact_hashes[0] });
    expect(set.firstRevoked({ packageId: 'x', signerKeys: [], artifactHashes: [] })).toBeUndefined();
    expect(
      RevocationSet.failedClosed('unreadable').firstRevoked({ signerKeys: [], artifactHashes: [] }),
    ).toEqual({ kind: 'list-unavailable', ref: '*', reason: 'unreadable' });
  });
});

describe('revocations: package ids are compared case-insensitively', () => {
  it('an upper-case package id in the context matches a lower-case revocation', () => {
    const set = new RevocationSet({ package_ids: [PKG] });
    expect(
      evaluate(compiled, set, 'a', 'workload.start', ctx({ package_id: PKG.toUpperCase() })).decision,
    ).toMatchObject({ verdict: 'deny', rule: 'builtin:revoked', reason: `package id ${PKG} is revoked` });
  });

  it('an upper-case revocation matches a lower-case package id; names compare case-insensitively', () => {
    const set = new RevocationSet({ package_ids: [PKG.toUpperCase(), 'Acme/Sensor@1.0.0'] });
    expect(evaluate(compiled, set, 'a', 'workload.start', ctx({ package_id: PKG })).decision.rule).toBe(
      'builtin:revoked',
    );
    expect(evaluate(compiled, set, 'a', 'workload.start', BASE).decision.rule).toBe('builtin:revoked');
  });

  it('a structural check (a signed list holds lower-case hex only) is asked with the lower-cased id', () => {
    const refs: RevocationRefs[] = [];
    const check: RevocationCheck = {
      firstRevoked: (r) => {
        refs.push(r);
        return r.packageId === PKG ? { kind: 'package', ref: PKG } : undefined;
      },
    };
    expect(
      evaluate(compiled, check, 'a', 'workload.start', ctx({ package_id: PKG.toUpperCase() })).decision.rule,
    ).toBe('builtin:revoked');
    expect(refs[0]?.packageId).toBe(PKG);
  });
});
