import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex } from '@heddle/envelope';
import { afterEach, describe, expect, it } from 'vitest';
import { PackageError } from './errors.js';
import { RevocationHolder } from './revocation-holder.js';
import { MAX_GENERATION_STEP, RevocationList } from './revocation-list.js';
import { fixedKeys, tempDir } from './test-fixtures.js';

const operatorKeys = fixedKeys(0x0b);
const strangerKeys = fixedKeys(0x5e);

const TRUSTED = [toHex(operatorKeys.publicKey)];
const PKG = 'a1'.repeat(32);
const PKG2 = 'b2'.repeat(32);
const refs = (packageId: string) => ({ packageId, signerKeys: [], artifactHashes: [] });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh list path in a fresh directory (no list, no generation mark). */
function listPath(): string {
  const d = tempDir('heddle-hs-rev-');
  dirs.push(d);
  return join(d, 'revocations.json');
}

const revokedList = (ref = PKG, keys = operatorKeys): RevocationList =>
  RevocationList.empty().add(
    { kind: 'package', ref, revokedAtMs: 1_700_000_000_000, reason: 'bad build' },
    keys,
  );

describe('RevocationHolder over a list file', () => {
  it('a missing file with no generation mark is the empty list at version 0', () => {
    const holder = new RevocationHolder({ path: listPath(), trustedKeys: TRUSTED });
    expect(holder.version).toBe(0);
    expect(holder.failure).toBeUndefined();
    expect(holder.list.generation).toBe(0);
    expect(holder.list.entries).toHaveLength(0);
    expect(holder.firstRevoked(refs(PKG))).toBeUndefined();
    expect(holder.reload()).toBe(false);
    expect(holder.version).toBe(0);
  });

  it('picks up a saved signed list on reload, then reports no change until it changes', () => {
    const path = listPath();
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    const list = revokedList();
    list.save(path);
    expect(holder.reload()).toBe(true);
    expect(holder.version).toBe(1);
    expect(holder.failure).toBeUndefined();
    expect(holder.list.generation).toBe(1);
    expect(holder.firstRevoked(refs(PKG))).toEqual({ kind: 'package', ref: PKG, reason: 'bad build' });
    expect(holder.firstRevoked(refs(PKG2))).toBeUndefined();
    expect(holder.reload()).toBe(false);
    expect(holder.version).toBe(1);

    list.add({ kind: 'package', ref: PKG2, revokedAtMs: 1 }, operatorKeys).save(path);
    expect(holder.reload()).toBe(true);
    expect(holder.version).toBe(2);
    expect(holder.firstRevoked(refs(PKG2))?.ref).toBe(PKG2);
  });

  it('loads an existing list at construction without counting a version', () => {
    const path = listPath();
    revokedList().save(path);
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    expect(holder.version).toBe(0);
    expect(holder.firstRevoked(refs(PKG))?.kind).toBe('package');
    expect(holder.reload()).toBe(false);
  });

  it('fails closed when the file is deleted after a generation was seen', () => {
    const path = listPath();
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    revokedList().save(path);
    expect(holder.reload()).toBe(true);
    rmSync(path);
    expect(existsSync(`${path}.generation`)).toBe(true);
    expect(holder.reload()).toBe(true);
    expect(holder.version).toBe(2);
    expect(holder.failure).toMatch(/^revocation_rollback: /);
    for (const r of [refs(PKG2), { signerKeys: [], artifactHashes: [] }]) {
      expect(holder.firstRevoked(r)?.kind).toBe('list-unavailable');
    }
    // Still failed for the same reason: no change.
    expect(holder.reload()).toBe(false);
    expect(holder.version).toBe(2);
  });

  it('recovers when a valid list is put back', () => {
    const path = listPath();
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    const list = revokedList();
    list.save(path);
    holder.reload();
    rmSync(path);
    holder.reload();
    expect(holder.failure).toBeDefined();
    list.save(path);
    expect(holder.reload()).toBe(true);
    expect(holder.failure).toBeUndefined();
    expect(holder.firstRevoked(refs(PKG2))).toBeUndefined();
  });

  it('fails closed on a list signed by an untrusted key', () => {
    const path = listPath();
    revokedList(PKG, strangerKeys).save(path, { generationFile: false });
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    expect(holder.failure).toMatch(/^revocation_list_invalid: /);
    expect(holder.firstRevoked(refs(PKG2))).toMatchObject({ kind: 'list-unavailable' });
    expect(holder.firstRevoked({ signerKeys: [], artifactHashes: [] })?.kind).toBe('list-unavailable');
  });

  it('fails closed on a tampered file', () => {
    const path = listPath();
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    writeFileSync(path, '{"schema":"heddle.revocation-list.v1","generation":1,"entries":[]}\n');
    expect(holder.reload()).toBe(true);
    expect(holder.failure).toMatch(/^revocation_list_invalid: /);
    expect(holder.firstRevoked(refs(PKG))?.kind).toBe('list-unavailable');
  });
});

describe('RevocationHolder changes', () => {
  it('a different list of the same generation and size is a change; dropping an entry fails closed', () => {
    const path = listPath();
    revokedList(PKG).save(path, { generationFile: false });
    const holder = new RevocationHolder({
      path,
      trustedKeys: TRUSTED,
      generationFile: join(path, '..', 'mark'),
    });
    expect(holder.firstRevoked(refs(PKG))).toBeDefined();
    revokedList(PKG2).save(path, { generationFile: false });
    expect(holder.reload()).toBe(true);
    expect(holder.version).toBe(1);
    expect(holder.firstRevoked(refs(PKG2))).toBeDefined();
    // It lacks PKG, which the list before revoked: entries are append-only, so it fails closed.
    expect(holder.failure).toMatch(/^revocation_entries_dropped: generation 1 lacks package:/);
    expect(holder.firstRevoked(refs(PKG))).toMatchObject({ kind: 'list-unavailable' });
  });

  it('keeps the generation mark where it is told', () => {
    const path = listPath();
    const mark = join(path, '..', 'state', 'revocations.generation');
    revokedList().save(path, { generationFile: false });
    new RevocationHolder({ path, trustedKeys: TRUSTED, generationFile: mark });
    expect(existsSync(mark)).toBe(true);
    expect(existsSync(`${path}.generation`)).toBe(false);
    rmSync(path);
    const after = new RevocationHolder({ path, trustedKeys: TRUSTED, generationFile: mark });
    expect(after.failure).toMatch(/revocation_rollback/);
  });
});

describe('RevocationHolder over a fixed list', () => {
  it('reload never changes it; replace does, once per change', () => {
    const holder = new RevocationHolder(RevocationList.empty());
    expect(holder.version).toBe(0);
    expect(holder.reload()).toBe(false);
    expect(holder.firstRevoked(refs(PKG))).toBeUndefined();

    const list = revokedList();
    expect(holder.replace(list)).toBe(true);
    expect(holder.version).toBe(1);
    expect(holder.list).toBe(list);
    expect(holder.firstRevoked(refs(PKG))?.ref).toBe(PKG);
    expect(holder.reload()).toBe(false);
    expect(holder.list).toBe(list);

    expect(holder.replace(list)).toBe(false);
    expect(holder.version).toBe(1);

    expect(holder.replace(RevocationList.failedClosed('operator says so'))).toBe(true);
    expect(holder.version).toBe(2);
    expect(holder.failure).toBe('operator says so');
    expect(holder.firstRevoked(refs(PKG2))).toEqual({
      kind: 'list-unavailable',
      ref: '*',
      reason: 'operator says so',
    });
  });

  it('keeps a fixed revoking list across reloads', () => {
    const list = revokedList();
    const holder = new RevocationHolder(list);
    expect(holder.reload()).toBe(false);
    expect(holder.list).toBe(list);
    expect(holder.firstRevoked(refs(PKG))?.kind).toBe('package');
  });
});

// The controller's reloader (apps/controller CurrentRevocations) and the host's (this holder, from
// host-service) differed: the controller's reported a change only when the generation or the failure
// changed, put a list that drops entries in force as usable, saved any newer list it was handed
// without the generation-step or append-only checks, and neither noticed a fixed list expiring.
describe('RevocationHolder expiry', () => {
  it('a list in force that passes its expiry is a change, and failure says why', async () => {
    const list = RevocationList.empty().add(
      { kind: 'package', ref: PKG, revokedAtMs: 1_700_000_000_000 },
      operatorKeys,
      { now: Date.now() - 10_000, validForMs: 10_150 },
    );
    const holder = new RevocationHolder(list);
    expect(holder.failure).toBeUndefined();
    expect(holder.firstRevoked(refs(PKG2))).toBeUndefined();
    await new Promise((r) => setTimeout(r, 250));
    expect(holder.failure).toMatch(/^revocation_list_expired: generation 1 expired at/);
    expect(holder.firstRevoked(refs(PKG2))).toMatchObject({ kind: 'list-unavailable' });
    expect(holder.reload()).toBe(true);
    expect(holder.version).toBe(1);
    expect(holder.reload()).toBe(false);
  });

  it('a list file in force that expires by the holder clock fails closed on the next reload', () => {
    const path = listPath();
    let now = Date.now();
    revokedList().save(path);
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED, clock: () => now });
    expect(holder.failure).toBeUndefined();
    now += 31 * 24 * 3600 * 1000;
    expect(holder.failure).toMatch(/^revocation_list_expired: /);
    expect(holder.reload()).toBe(true);
    expect(holder.list.failure).toMatch(/^revocation_list_expired: /);
  });
});

describe('RevocationHolder.accept', () => {
  const next = (list: RevocationList, ref: string): RevocationList =>
    list.add({ kind: 'package', ref, revokedAtMs: 1_700_000_000_000 }, operatorKeys);

  it('writes a newer list and puts it in force; the same list again is not written', () => {
    const path = listPath();
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    const one = revokedList();
    expect(holder.accept(one)).toEqual({ applied: true, changed: true });
    expect(holder.list.generation).toBe(1);
    expect(existsSync(`${path}.generation`)).toBe(true);
    expect(holder.accept(one)).toEqual({ applied: false, changed: false });
    expect(holder.accept(next(one, PKG2))).toEqual({ applied: true, changed: true });
    expect(holder.firstRevoked(refs(PKG2))?.ref).toBe(PKG2);
  });

  it('refuses an older list, another list at the held generation, a list that drops an entry and a jump, writing nothing', () => {
    const path = listPath();
    const holder = new RevocationHolder({ path, trustedKeys: TRUSTED });
    const one = revokedList(PKG);
    const two = next(one, PKG2);
    holder.accept(two);
    const bytes = readFileSync(path, 'utf8');
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
        return undefined;
      } catch (err) {
        return err instanceof PackageError ? `${err.code}/${err.field}` : String(err);
      }
    };
    expect(code(() => holder.accept(one))).toBe('revocation_rollback/generation');
    // Generation 2 again, with the same entries and another expiry.
    const otherTwo = one.add({ kind: 'package', ref: PKG2, revokedAtMs: 1_700_000_000_000 }, operatorKeys, {
      now: Date.now() + 60_000,
    });
    expect(otherTwo.generation).toBe(2);
    expect(code(() => holder.accept(otherTwo))).toBe('revocation_generation_reused/generation');
    // Generation 3 without PKG, which generation 2 revoked.
    const dropping = next(next(revokedList(PKG2), 'c3'.repeat(32)), 'd4'.repeat(32));
    expect(dropping.generation).toBe(3);
    expect(code(() => holder.accept(dropping))).toBe('revocation_entries_dropped/entries');
    const far = two.renew(operatorKeys, { above: 2 + MAX_GENERATION_STEP });
    expect(code(() => holder.accept(far))).toBe('revocation_generation_jump/generation');
    expect(readFileSync(path, 'utf8')).toBe(bytes);
    expect(holder.failure).toBeUndefined();
    expect(holder.version).toBe(1);
  });

  it('a holder of a fixed list keeps no file: revocation_list_invalid', () => {
    const holder = new RevocationHolder(RevocationList.empty());
    expect(() => holder.accept(revokedList())).toThrow(
      expect.objectContaining({ code: 'revocation_list_invalid', field: 'path' }),
    );
  });
});
