import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalJson, generateKeyPair, parseJson, toHex } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signRevocationEntry, verifyRevocationEntry } from './revocation.js';
import { RevocationList, type RevocationListFile } from './revocation-list.js';
import { tempDir } from './test-fixtures.js';

const ref = (c: string) => c.repeat(64);

describe('revocation entries', () => {
  it('are signed with the revocation domain tag and refuse malformed refs', () => {
    const keys = generateKeyPair();
    const e = signRevocationEntry({ kind: 'package', ref: ref('a'), revokedAtMs: 5, reason: 'leaked' }, keys);
    expect(verifyRevocationEntry(e)).toBe(true);
    expect(verifyRevocationEntry({ ...e, ref: ref('b') })).toBe(false);
    expect(verifyRevocationEntry({ ...e, reason: undefined })).toBe(false);
    expect(verifyRevocationEntry({ ...e, signature: 'zz' })).toBe(false);
    expect(() => signRevocationEntry({ kind: 'package', ref: 'ABC', revokedAtMs: 1 }, keys)).toThrow(
      expect.objectContaining({ code: 'revocation-invalid', field: 'ref' }),
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
      expect.objectContaining({ code: 'revocation-list-invalid', field: 'entries[0].signer' }),
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
        expect.objectContaining({ code: 'revocation-list-invalid', field }),
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
      expect.objectContaining({ code: 'revocation-rollback' }),
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
      expect.objectContaining({ code: 'revocation-list-invalid' }),
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
