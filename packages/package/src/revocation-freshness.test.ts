// Revocation list freshness (expiry), bounded generation steps, the supported renewal, and loading
// with a read-only mark.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalBytes, DomainTag, generateKeyPair, signWithDomain, toHex } from '@heddle/envelope';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REVOCATION_VALIDITY_MS,
  MAX_GENERATION_STEP,
  RevocationList,
  type RevocationListFile,
} from './revocation-list.js';
import { tempDir } from './test-fixtures.js';

const ops = generateKeyPair();
const trustedKeys = [toHex(ops.publicKey)];
const ref = (c: string) => c.repeat(64);
const T = 1_800_000_000_000;
const DAY = 24 * 3600 * 1000;

/** A list file signed by `ops` with whatever generation and expiry (what a hostile key holder can make). */
function forged(generation: number, expiresAtMs: number | undefined): string {
  const entries: RevocationListFile['entries'] = [];
  const body: Record<string, unknown> = {
    schema: 'heddle.revocation-list.v1',
    generation,
    entries,
    ...(expiresAtMs === undefined ? {} : { expires_at_ms: expiresAtMs }),
  };
  const sig = signWithDomain(DomainTag.revocationList, ops.secretKey, canonicalBytes(body as never));
  return JSON.stringify({ ...body, signer: toHex(ops.publicKey), signature: toHex(sig) });
}

describe('revocation list expiry (the freeze attack)', () => {
  it('signs an expiry (30 days by default), refuses an expired list at load and fails closed', () => {
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const l = RevocationList.empty().add({ kind: 'package', ref: ref('a'), revokedAtMs: T }, ops, { now: T });
    expect(l.expiresAtMs).toBe(T + DEFAULT_REVOCATION_VALIDITY_MS);
    l.save(path);
    const before = RevocationList.load(path, { trustedKeys, clock: () => T + 29 * DAY });
    expect(before.isRevoked('package', ref('b'))).toBe(false);
    expect(() => RevocationList.load(path, { trustedKeys, clock: () => T + 30 * DAY })).toThrow(
      expect.objectContaining({ code: 'revocation_list_expired', field: 'expires_at_ms' }),
    );
    const closed = RevocationList.loadOrFailClosed(path, { trustedKeys, clock: () => T + 31 * DAY });
    expect(closed.failure).toMatch(/^revocation_list_expired: /);
    expect(closed.isRevoked('package', ref('b'))).toBe(true);
  });

  it('a list in force that passes its expiry revokes everything from that moment', () => {
    let now = T;
    const dir = tempDir();
    const path = join(dir, 'r.json');
    RevocationList.empty()
      .add({ kind: 'package', ref: ref('a'), revokedAtMs: T }, ops, { now: T, validForMs: DAY })
      .save(path);
    const l = RevocationList.load(path, { trustedKeys, clock: () => now });
    expect(l.firstRevoked({ packageId: ref('c'), signerKeys: [], artifactHashes: [] })).toBeUndefined();
    now = T + DAY;
    expect(l.expired).toMatch(/^revocation_list_expired: generation 1 expired at/);
    expect(l.firstRevoked({ packageId: ref('c'), signerKeys: [], artifactHashes: [] })).toMatchObject({
      kind: 'list-unavailable',
      reason: expect.stringMatching(/^revocation_list_expired/),
    });
    expect(l.entryFor('package', ref('c'))).toMatchObject({ kind: 'list-unavailable' });
  });

  it('refuses a signed list without an expiry, and an expiry that was edited', () => {
    expect(() => RevocationList.parse(forged(1, undefined), { trustedKeys })).toThrow(
      expect.objectContaining({ code: 'revocation_list_invalid', field: 'expires_at_ms' }),
    );
    const text = forged(1, Date.now() + DAY).replace(
      /"expires_at_ms":(\d+)/,
      (_m, n) => `"expires_at_ms":${Number(n) + DAY}`,
    );
    expect(() => RevocationList.parse(text, { trustedKeys })).toThrow(
      expect.objectContaining({ code: 'revocation_list_invalid', field: 'signature' }),
    );
  });
});

describe('bounded generations and the supported recovery', () => {
  it('refuses a generation of 2^53 - 1 outright, and a jump of more than 65,536 above the mark', () => {
    expect(() => RevocationList.parse(forged(2 ** 53 - 1, Date.now() + DAY), { trustedKeys })).toThrow(
      expect.objectContaining({ code: 'revocation_list_invalid', field: 'generation' }),
    );
    const dir = tempDir();
    const path = join(dir, 'r.json');
    writeFileSync(path, forged(MAX_GENERATION_STEP + 1, Date.now() + DAY));
    expect(() => RevocationList.load(path, { trustedKeys })).toThrow(
      expect.objectContaining({ code: 'revocation_generation_jump' }),
    );
    expect(existsSync(`${path}.generation`)).toBe(false); // the mark did not move
    writeFileSync(path, forged(MAX_GENERATION_STEP, Date.now() + DAY));
    expect(RevocationList.load(path, { trustedKeys }).generation).toBe(MAX_GENERATION_STEP);
  });

  it('renew re-signs the same entries past a host mark with a fresh expiry; the host accepts it', () => {
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const l1 = RevocationList.empty().add({ kind: 'signer', ref: ref('5'), revokedAtMs: T }, ops, { now: T });
    // A host holds a mark far above the operator's list (a list that jumped ahead was installed there).
    writeFileSync(`${path}.generation`, '{"generation":40000,"schema":"heddle.revocation-generation.v1"}\n');
    expect(() => l1.save(path)).toThrow(expect.objectContaining({ code: 'revocation_rollback' }));
    const renewed = l1.renew(ops, { above: 40_000 });
    expect(renewed.generation).toBe(40_001);
    expect(renewed.entries).toEqual(l1.entries);
    expect(renewed.expired).toBeUndefined();
    renewed.save(path);
    expect(RevocationList.load(path, { trustedKeys }).generation).toBe(40_001);
  });
});

describe('loading with a read-only mark', () => {
  it('reads and enforces the mark but never writes one (verification with read-only access)', () => {
    const dir = tempDir();
    const path = join(dir, 'r.json');
    const l2 = RevocationList.empty()
      .add({ kind: 'artifact', ref: ref('1'), revokedAtMs: 1 }, ops)
      .add({ kind: 'artifact', ref: ref('2'), revokedAtMs: 2 }, ops);
    l2.save(path, { generationFile: false });
    chmodSync(dir, 0o555);
    try {
      expect(RevocationList.load(path, { trustedKeys, readOnlyMark: true }).generation).toBe(2);
      expect(existsSync(`${path}.generation`)).toBe(false);
    } finally {
      chmodSync(dir, 0o755);
    }
    writeFileSync(`${path}.generation`, '{"generation":3,"schema":"heddle.revocation-generation.v1"}\n');
    expect(() => RevocationList.load(path, { trustedKeys, readOnlyMark: true })).toThrow(
      expect.objectContaining({ code: 'revocation_rollback' }),
    );
    expect(readFileSync(`${path}.generation`, 'utf8')).toContain('"generation":3');
  });
});
