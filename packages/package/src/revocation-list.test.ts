import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  canonicalBytes,
  canonicalJson,
  DomainTag,
  fromHex,
  generateKeyPair,
  parseJson,
  toHex,
  verifyWithDomain,
} from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type RevocationEntry,
  revocationEntryMessage,
  signRevocationEntry,
  verifyRevocationEntry,
} from './revocation.js';
import { RevocationList, type RevocationListFile } from './revocation-list.js';
import { tempDir } from './test-fixtures.js';

const ref = (c: string) => c.repeat(64);

describe('revocation entries', () => {
  it('are signed with the revocation domain tag and refuse malformed refs', () => {
    const keys = generateKeyPair();
    const e = signRevocationEntry({ kind: 'package', ref: ref('a'), revokedAtMs: 5, reason: 'leaked' }, keys);
    expect(verifyRevocationEntry(e)).toBe(true);
    expect(verifyRevocationEntry({ ...e, ref: ref('b') })).toBe(false);
    const { reason: _reason, ...withoutReason } = e;
    expect(verifyRevocationEntry(withoutReason)).toBe(false);
    expect(verifyRevocationEntry({ ...e, signature: 'zz' })).toBe(false);
    expect(() => signRevocationEntry({ kind: 'package', ref: 'ABC', revokedAtMs: 1 }, keys)).toThrow(
      expect.objectContaining({ code: 'revocation_invalid', field: 'ref' }),
    );
  });
});

describe('RevocationList', () => {
  const ops = generateKeyPair();
  const trustedKeys = [toHex(ops.publicKey)];

  it('increments the generation on every new entry and finds the first revoked reference', () => {
    const l0 = RevocationList.empty();
    const l1 = l0.add({ kind: 'signer', ref: ref('1'), revokedAtMs: 1 }, ops);
    const l2 = l1.add({ kind: 'artifact', ref: ref('2'), revokedAtMs: 2, reason: 'malware' }, ops);
    expect([l0.generation, l1.generation, l2.generation]).toEqual([0, 1, 2]);
    expect(l2.add({ kind: 'artifact', ref: ref('2'), revokedAtMs: 3 }, ops)).toBe(l2);
    expect(
      l2.firstRevoked({ packageId: ref('9'), signerKeys: [ref('8')], artifactHashes: [ref('7'), ref('2')] }),
    ).toEqual({
      kind: 'artifact',
      ref: ref('2'),
      reason: 'malware',
    });
    expect(
      l2.firstRevoked({ packageId: ref('9'), signerKeys: [ref('1')], artifactHashes: [ref('2')] })?.kind,
    ).toBe('signer');
    expect(l2.firstRevoked({ signerKeys: [], artifactHashes: [] })).toBeUndefined();
    expect(l2.isRevoked('signer', ref('1'))).toBe(true);
    expect(l2.isRevoked('package', ref('1'))).toBe(false);
  });

  it('persists and reloads; accepts only entries signed by trusted operator keys', () => {
    const path = join(tempDir(), 'revocations.json');
    const list = RevocationList.empty().add({ kind: 'package', ref: ref('a'), revokedAtMs: 1 }, ops);
    list.save(path);
    expect(RevocationList.load(path, { trustedKeys }).entries).toEqual(list.entries);
    expect(() => RevocationList.load(path, { trustedKeys: [toHex(generateKeyPair().publicKey)] })).toThrow(
      expect.objectContaining({ code: 'revocation_list_invalid', field: 'entries[0].signer' }),
    );
    // A list extended by a stranger's key is refused even when the file is internally consistent.
    const stranger = generateKeyPair();
    list.add({ kind: 'package', ref: ref('b'), revokedAtMs: 2 }, stranger).save(path);
    expect(() => RevocationList.load(path, { trustedKeys })).toThrow(
      expect.objectContaining({ field: 'entries[1].signer' }),
    );
  });

  it('fails closed on tampering: a removed entry, an unsigned entry, an edited generation, junk', () => {
    const path = join(tempDir(), 'revocations.json');
    const list = RevocationList.empty()
      .add({ kind: 'package', ref: ref('a'), revokedAtMs: 1 }, ops)
      .add({ kind: 'signer', ref: ref('b'), revokedAtMs: 2 }, ops);
    const file = list.toJSON();
    const variants: Array<[unknown, string]> = [
      [{ ...file, entries: file.entries.slice(1) }, 'signature'],
      [{ ...file, generation: 7 }, 'signature'],
      [
        { ...file, entries: [...file.entries, { ...file.entries[0], ref: ref('c') }] },
        'entries[2].signature',
      ],
      [{ ...file, signature: undefined, signer: undefined }, 'signature'],
      [{ ...file, extra: true }, '$'],
      [{ ...file, entries: [file.entries[0], file.entries[0]] }, 'entries[1]'],
      [{ schema: file.schema, generation: 0, entries: file.entries }, 'generation'],
    ];
    for (const [value, field] of variants) {
      writeFileSync(path, canonicalJson(value));
      expect(() => RevocationList.load(path, { trustedKeys }), field).toThrow(
        expect.objectContaining({ code: 'revocation_list_invalid', field }),
      );
      const closed = RevocationList.loadOrFailClosed(path, { trustedKeys });
      expect(closed.failure).toBeDefined();
      expect(closed.firstRevoked({ signerKeys: [], artifactHashes: [] })?.kind).toBe('list-unavailable');
      expect(closed.isRevoked('package', ref('0'))).toBe(true);
      expect(() => closed.add({ kind: 'package', ref: ref('d'), revokedAtMs: 1 }, ops)).toThrow();
    }
    writeFileSync(path, Buffer.from([0xff, 0x00]));
    expect(RevocationList.loadOrFailClosed(path, { trustedKeys }).failure).toBeDefined();
    expect(RevocationList.loadOrFailClosed(join(tempDir(), 'missing.json'), { trustedKeys }).failure).toMatch(
      /cannot read/,
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        writeFileSync(path, text);
        expect(RevocationList.loadOrFailClosed(path, { trustedKeys }).failure).toBeDefined();
      }),
      { numRuns: 50 },
    );
  });

  it('refuses to roll back to an older generation', () => {
    const path = join(tempDir(), 'revocations.json');
    const l1 = RevocationList.empty().add({ kind: 'package', ref: ref('a'), revokedAtMs: 1 }, ops);
    l1.save(path);
    expect(() => RevocationList.load(path, { trustedKeys, minGeneration: 2 })).toThrow(
      expect.objectContaining({ code: 'revocation_rollback' }),
    );
    expect(RevocationList.load(path, { trustedKeys, minGeneration: 1 }).generation).toBe(1);
  });

  it('crash-safe: a writer killed with SIGKILL mid-write leaves the old or the new list, never a broken one', async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const child = fileURLToPath(new URL('./revocation-writer.fixture.ts', import.meta.url));
    const keys = generateKeyPair();
    const path = join(tempDir(), 'revocations.json');
    RevocationList.empty().save(path);
    const trusted = [toHex(keys.publicKey)];
    let lastAcked = 0;
    for (let round = 0; round < 3; round++) {
      const proc = spawn(process.execPath, ['--import', 'tsx', child, path, toHex(keys.secretKey)], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      proc.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      let acked = lastAcked;
      const target = lastAcked + 5 + round * 7;
      await new Promise<void>((resolve, reject) => {
        proc.stdout.on('data', (d: Buffer) => {
          for (const line of d.toString().split('\n')) if (line !== '') acked = Math.max(acked, Number(line));
          if (acked >= target && !proc.killed) proc.kill('SIGKILL');
        });
        proc.on('exit', (code, signal) =>
          signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${code}: ${stderr}`)),
        );
      });
      const list = RevocationList.load(path, { trustedKeys: trusted, minGeneration: acked });
      // Every acknowledged generation is on disk; at most the one being written when killed went further.
      expect(list.generation).toBeGreaterThanOrEqual(acked);
      expect(list.generation).toBeLessThanOrEqual(acked + 1);
      expect(list.entries).toHaveLength(list.generation);
      const parsed = parseJson(readFileSync(path, 'utf8')) as unknown as RevocationListFile;
      expect(parsed.generation).toBe(list.generation);
      lastAcked = list.generation;
    }
    expect(lastAcked).toBeGreaterThan(5);
  }, 90_000);
});

describe('RevocationList options', () => {
  it('allowMissing makes only a missing file empty; trustNamedSigners accepts the keys the list names', () => {
    const ops = generateKeyPair();
    const dir = tempDir();
    const path = join(dir, 'rl.json');
    expect(RevocationList.load(path, { trustedKeys: [], allowMissing: true }).generation).toBe(0);
    writeFileSync(path, 'junk');
    expect(() => RevocationList.load(path, { trustedKeys: [], allowMissing: true })).toThrow(
      expect.objectContaining({ code: 'revocation_list_invalid' }),
    );
    RevocationList.empty()
      .add({ kind: 'artifact', ref: 'd'.repeat(64), revokedAtMs: 1 }, ops)
      .save(path);
    expect(RevocationList.load(path, { trustedKeys: [], trustNamedSigners: true }).generation).toBe(1);
    expect(() => RevocationList.load(path, { trustedKeys: [] })).toThrow(
      expect.objectContaining({ field: 'entries[0].signer' }),
    );
  });
});

describe('RevocationList: the persisted high-water mark of the generation', () => {
  const ops = generateKeyPair();
  const trustedKeys = [toHex(ops.publicKey)];
  const add = (l: RevocationList, c: string) => l.add({ kind: 'artifact', ref: ref(c), revokedAtMs: 1 }, ops);

  it('save gen 3, then put back a validly signed gen-2 file: refused (rollback), and fails closed', () => {
    const path = join(tempDir(), 'revocations.json');
    const gen2 = add(add(RevocationList.empty(), '1'), '2');
    gen2.save(path);
    const gen2Bytes = readFileSync(path);
    add(gen2, '3').save(path);
    expect(existsSync(`${path}.generation`)).toBe(true);
    writeFileSync(path, gen2Bytes);
    // The gen-2 file on its own is perfectly valid...
    expect(RevocationList.parse(gen2Bytes.toString('utf8'), { trustedKeys }).generation).toBe(2);
    // ...but this host has seen generation 3.
    expect(() => RevocationList.load(path, { trustedKeys })).toThrow(
      expect.objectContaining({ code: 'revocation_rollback', field: 'generation' }),
    );
    const closed = RevocationList.loadOrFailClosed(path, { trustedKeys });
    expect(closed.failure).toMatch(/^revocation_rollback: /);
    expect(closed.firstRevoked({ signerKeys: [], artifactHashes: [] })?.kind).toBe('list-unavailable');
  });

  it('a list seen once by load raises the mark; a deleted list is a rollback even with allowMissing', () => {
    const dir = tempDir();
    const path = join(dir, 'rl.json');
    const gen1 = add(RevocationList.empty(), '1');
    const gen2 = add(gen1, '2');
    writeFileSync(path, gen2.encode()); // written by someone else: no mark yet
    expect(existsSync(`${path}.generation`)).toBe(false);
    expect(RevocationList.load(path, { trustedKeys }).generation).toBe(2);
    writeFileSync(path, gen1.encode());
    expect(() => RevocationList.load(path, { trustedKeys })).toThrow(
      expect.objectContaining({ code: 'revocation_rollback' }),
    );
    rmSync(path);
    expect(() => RevocationList.load(path, { trustedKeys, allowMissing: true })).toThrow(
      expect.objectContaining({ code: 'revocation_rollback' }),
    );
    // An explicit mark file elsewhere, or none at all, when asked for.
    const elsewhere = join(dir, 'state', 'mark');
    writeFileSync(path, gen1.encode());
    expect(RevocationList.load(path, { trustedKeys, generationFile: false }).generation).toBe(1);
    expect(RevocationList.load(path, { trustedKeys, generationFile: elsewhere }).generation).toBe(1);
  });

  it('a list checked only against the keys it names never raises the mark; a corrupt mark fails closed', () => {
    const path = join(tempDir(), 'rl.json');
    const stranger = generateKeyPair();
    let forged = RevocationList.empty();
    for (let i = 0; i < 5; i++)
      forged = forged.add({ kind: 'package', ref: ref(String(i)), revokedAtMs: 1 }, stranger);
    writeFileSync(path, forged.encode());
    expect(RevocationList.load(path, { trustedKeys: [], trustNamedSigners: true }).generation).toBe(5);
    expect(existsSync(`${path}.generation`)).toBe(false);
    writeFileSync(`${path}.generation`, 'garbage');
    expect(() => RevocationList.load(path, { trustedKeys: [], trustNamedSigners: true })).toThrow(
      expect.objectContaining({ code: 'revocation_list_invalid', field: 'rl.json.generation' }),
    );
  });
});

describe('RevocationList: signatures and failed-closed answers', () => {
  const ops = generateKeyPair();
  const add = (l: RevocationList, c: string) => l.add({ kind: 'artifact', ref: ref(c), revokedAtMs: 1 }, ops);

  it('the whole-list signature uses the revocation-list domain tag, entries the revocation tag', () => {
    const list = add(RevocationList.empty(), '1');
    const file = list.toJSON();
    const message = canonicalBytes({
      schema: file.schema,
      generation: file.generation,
      entries: file.entries,
      expires_at_ms: file.expires_at_ms as number,
    });
    const sig = fromHex(file.signature as string, 64);
    expect(DomainTag.revocationList).toBe('heddle.revocation-list.v1\n');
    expect(verifyWithDomain(DomainTag.revocationList, ops.publicKey, message, sig)).toBe(true);
    expect(verifyWithDomain(DomainTag.revocation, ops.publicKey, message, sig)).toBe(false);
    const entry = file.entries[0] as RevocationEntry;
    expect(
      verifyWithDomain(
        DomainTag.revocation,
        ops.publicKey,
        revocationEntryMessage(entry),
        fromHex(entry.signature, 64),
      ),
    ).toBe(true);
  });

  it('entryFor agrees with isRevoked on a failed-closed list', () => {
    const closed = RevocationList.failedClosed('unreadable');
    expect(closed.isRevoked('package', ref('a'))).toBe(true);
    expect(closed.entryFor('package', ref('a'))).toEqual({
      kind: 'list-unavailable',
      ref: ref('a'),
      reason: 'unreadable',
    });
    const list = add(RevocationList.empty(), '1');
    expect(list.entryFor('artifact', ref('1'))?.kind).toBe('artifact');
    expect(list.entryFor('artifact', ref('2'))).toBeUndefined();
    expect(list.isRevoked('artifact', ref('2'))).toBe(false);
  });
});
