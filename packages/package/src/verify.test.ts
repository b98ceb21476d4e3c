import { readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson, generateKeyPair, type JsonValue, parseJson, toHex } from '@heddle/envelope';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PackageError } from './errors.js';
import { encodeEnvelope, type PackageEnvelope } from './format.js';
import { ENVELOPE_FILE } from './limits.js';
import { NO_REVOCATIONS } from './revocation.js';
import { RevocationList } from './revocation-list.js';
import { signEnvelope } from './sign.js';
import { anchorsFor, buildSigned, fixedKeys } from './test-fixtures.js';
import { TrustAnchors } from './trust.js';
import { type VerifyOptions, verifyPackage } from './verify.js';

async function codeOf(dir: string, options: VerifyOptions): Promise<string> {
  try {
    await verifyPackage(dir, options);
    return 'ok';
  } catch (err) {
    if (err instanceof PackageError) return err.code;
    throw err;
  }
}

function readEnv(dir: string): PackageEnvelope {
  return parseJson(readFileSync(join(dir, ENVELOPE_FILE), 'utf8')) as unknown as PackageEnvelope;
}

function writeEnv(dir: string, env: unknown): void {
  writeFileSync(join(dir, ENVELOPE_FILE), `${canonicalJson(env)}\n`);
}

describe('verifyPackage: success', () => {
  it('returns a VerifiedWorkload with package id, signers and artifact hashes', async () => {
    const keys = fixedKeys(7);
    const built = await buildSigned([keys]);
    const w = await verifyPackage(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS });
    expect(w.packageId).toBe(built.package.packageId);
    expect(w.manifestHash).toBe(built.package.manifestHash);
    expect(w.signerKeys).toEqual([toHex(keys.publicKey)]);
    expect(w.signerIds).toEqual(['k0']);
    expect(w.artifactHashes).toEqual([...built.package.files.map((f) => f.blake3)].sort());
    expect(w.refs).toEqual({
      packageId: w.packageId,
      signerKeys: w.signerKeys,
      artifactHashes: w.artifactHashes,
    });
    expect(w.files.map((f) => f.path)).toEqual(['bin/run.sh', 'run.wasm']);
    expect(w.kind).toBe('cog');
  });
});

describe('verifyPackage: each error code', () => {
  it('manifest_invalid: missing envelope', async () => {
    const built = await buildSigned();
    rmSync(join(built.dir, ENVELOPE_FILE));
    expect(
      await codeOf(built.dir, { anchors: anchorsFor([generateKeyPair()]), revocations: NO_REVOCATIONS }),
    ).toBe('manifest_invalid');
  });

  it('missing_signature: an unsigned package', async () => {
    const built = await buildSigned([]);
    expect(
      await codeOf(built.dir, { anchors: anchorsFor([generateKeyPair()]), revocations: NO_REVOCATIONS }),
    ).toBe('missing_signature');
  });

  it('untrusted_signer: signed only by an unpinned key (wrong key)', async () => {
    const built = await buildSigned([generateKeyPair()]);
    expect(
      await codeOf(built.dir, { anchors: anchorsFor([generateKeyPair()]), revocations: NO_REVOCATIONS }),
    ).toBe('untrusted_signer');
  });

  it('bad_signature: a pinned key whose signature does not verify', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const env = readEnv(built.dir);
    const sig = env.signatures[0] as { signature: string };
    sig.signature = (sig.signature[0] === 'a' ? 'b' : 'a') + sig.signature.slice(1);
    writeEnv(built.dir, env);
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'bad_signature',
    );
  });

  it('file_missing: a listed file was deleted', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    rmSync(join(built.dir, 'run.wasm'));
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'file_missing',
    );
  });

  it('file_tampered: one byte of a file changed', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const p = join(built.dir, 'bin', 'run.sh');
    const bytes = readFileSync(p);
    bytes[3] = (bytes[3] as number) ^ 1;
    writeFileSync(p, bytes);
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'file_tampered',
    );
  });

  it('revoked: the package id is on the revocation list', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const list = RevocationList.empty().add(
      { kind: 'package', ref: built.package.packageId, revokedAtMs: 1 },
      keys,
    );
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: list })).toBe('revoked');
  });
});

describe('verifyPackage: signatures and trust', () => {
  it('ignores unpinned signers beside a valid pinned one, even with a garbage signature', async () => {
    const pinned = generateKeyPair();
    const stranger = generateKeyPair();
    const built = await buildSigned([pinned, stranger]);
    const env = readEnv(built.dir);
    const s = env.signatures.find((x) => x.public_key === toHex(stranger.publicKey)) as { signature: string };
    s.signature = 'f'.repeat(128);
    writeEnv(built.dir, env);
    const w = await verifyPackage(built.dir, { anchors: anchorsFor([pinned]), revocations: NO_REVOCATIONS });
    expect(w.signerKeys).toEqual([toHex(pinned.publicKey)]);
  });

  it('a bad signature by a pinned key is fatal even when another pinned key signed correctly', async () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    const built = await buildSigned([a, b]);
    const env = readEnv(built.dir);
    const s = env.signatures.find((x) => x.public_key === toHex(b.publicKey)) as { signature: string };
    s.signature = 'f'.repeat(128);
    writeEnv(built.dir, env);
    expect(await codeOf(built.dir, { anchors: anchorsFor([a, b]), revocations: NO_REVOCATIONS })).toBe(
      'bad_signature',
    );
  });

  it('threshold met and not met', async () => {
    const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
    const two = await buildSigned([a, b]);
    const w = await verifyPackage(two.dir, {
      anchors: anchorsFor([a, b, c], 2),
      revocations: NO_REVOCATIONS,
    });
    expect(w.signerKeys).toHaveLength(2);
    const one = await buildSigned([a]);
    const err = await verifyPackage(one.dir, {
      anchors: anchorsFor([a, b, c], 2),
      revocations: NO_REVOCATIONS,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PackageError);
    expect((err as PackageError).code).toBe('untrusted_signer');
    expect((err as PackageError).message).toMatch(/2 required/);
  });

  it('a signature moved to another package does not verify', async () => {
    const keys = generateKeyPair();
    const first = await buildSigned([keys]);
    const second = await buildSigned([keys]);
    const env2 = readEnv(second.dir);
    env2.body.version = '2.0.0';
    const env1 = readEnv(first.dir);
    env2.signatures = env1.signatures;
    writeEnv(second.dir, env2);
    expect(await codeOf(second.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'bad_signature',
    );
  });
});

describe('verifyPackage: tampering with each envelope field', () => {
  const cases: Array<[string, (env: PackageEnvelope, other: string) => void, string]> = [
    ['schema', (e) => Object.assign(e, { schema: 'heddle.package.v2' }), 'manifest_invalid'],
    ['kind', (e) => Object.assign(e, { kind: 'container-image' }), 'manifest_invalid'],
    ['extra top-level field', (e) => Object.assign(e, { extra: 1 }), 'manifest_invalid'],
    ['body.id', (e) => Object.assign(e.body, { id: 'other' }), 'bad_signature'],
    ['body.version', (e) => Object.assign(e.body, { version: '1.0.1' }), 'bad_signature'],
    [
      'body.variants',
      (e) => ((e.body.variants as Record<string, JsonValue>)['wasm32-wasi'] = undefined as never),
      'bad_signature',
    ],
    [
      'body.variants.*.file',
      (e) =>
        ((
          (e.body.variants as Record<string, Record<string, JsonValue>>)['x86_64-native'] as Record<
            string,
            JsonValue
          >
        ).file = 'run.wasm'),
      'bad_signature',
    ],
    [
      'body.files[].blake3',
      (e) => (((e.body.files as JsonValue[])[0] as Record<string, JsonValue>).blake3 = 'a'.repeat(64)),
      'bad_signature',
    ],
    [
      'body.files[].size',
      (e) => (((e.body.files as JsonValue[])[0] as Record<string, JsonValue>).size = 1),
      'bad_signature',
    ],
    [
      'body.files[].path',
      (e) => (((e.body.files as JsonValue[])[1] as Record<string, JsonValue>).path = 'run2.wasm'),
      'manifest_invalid',
    ],
    ['body.config', (e) => Object.assign(e.body, { config: {} }), 'bad_signature'],
    ['body.console', (e) => Object.assign(e.body, { console: [] }), 'bad_signature'],
    [
      'body.resources',
      (e) => Object.assign(e.body, { resources: { cpu_pct: 100, ram_mb: 32 } }),
      'bad_signature',
    ],
    [
      'body.source (added)',
      (e) => Object.assign(e.body, { source: 'https://example.invalid' }),
      'bad_signature',
    ],
    [
      'body.redistributable (added)',
      (e) => Object.assign(e.body, { redistributable: true }),
      'bad_signature',
    ],
    ['body unknown field', (e) => Object.assign(e.body, { extra: 1 }), 'manifest_invalid'],
    [
      'signatures[].public_key (unpinned)',
      (e) => ((e.signatures[0] as { public_key: string }).public_key = 'b'.repeat(64)),
      'untrusted_signer',
    ],
    [
      'signatures[].public_key (other pinned key)',
      (e, other) => ((e.signatures[0] as { public_key: string }).public_key = other),
      'bad_signature',
    ],
    [
      'signatures[].signature',
      (e) => ((e.signatures[0] as { signature: string }).signature = '0'.repeat(128)),
      'bad_signature',
    ],
    ['signatures removed', (e) => (e.signatures = []), 'missing_signature'],
  ];
  for (const [name, mutate, code] of cases) {
    it(`${name} -> ${code}`, async () => {
      const keys = generateKeyPair();
      const other = generateKeyPair();
      const built = await buildSigned([keys]);
      const env = readEnv(built.dir);
      mutate(env, toHex(other.publicKey));
      writeEnv(built.dir, env);
      expect(
        await codeOf(built.dir, { anchors: anchorsFor([keys, other]), revocations: NO_REVOCATIONS }),
      ).toBe(code);
    });
  }

  it('any single flipped byte of the envelope is refused (property)', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const path = join(built.dir, ENVELOPE_FILE);
    const original = readFileSync(path);
    await fc.assert(
      fc.asyncProperty(fc.nat(original.length - 1), fc.integer({ min: 1, max: 255 }), async (pos, xor) => {
        const copy = Buffer.from(original);
        copy[pos] = (copy[pos] as number) ^ xor;
        writeFileSync(path, copy);
        const code = await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS });
        expect(['manifest_invalid', 'bad_signature', 'untrusted_signer', 'missing_signature']).toContain(
          code,
        );
      }),
      { numRuns: 150 },
    );
  });
});

describe('verifyPackage: paths, links and sizes', () => {
  async function withFiles(mutate: (files: Array<Record<string, JsonValue>>) => void): Promise<string> {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    let env = readEnv(built.dir);
    mutate(env.body.files as Array<Record<string, JsonValue>>);
    env.signatures = [];
    env = signEnvelope(env, keys);
    writeFileSync(join(built.dir, ENVELOPE_FILE), encodeEnvelope(env));
    return codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS });
  }

  it('refuses path traversal even when validly signed', async () => {
    expect(await withFiles((f) => f.push({ path: '../outside', size: 1, blake3: 'a'.repeat(64) }))).toBe(
      'manifest_invalid',
    );
    expect(await withFiles((f) => f.push({ path: 'bin/../../x', size: 1, blake3: 'a'.repeat(64) }))).toBe(
      'manifest_invalid',
    );
  });

  it('refuses absolute paths and backslashes', async () => {
    expect(await withFiles((f) => f.push({ path: '/etc/passwd', size: 1, blake3: 'a'.repeat(64) }))).toBe(
      'manifest_invalid',
    );
    expect(await withFiles((f) => f.push({ path: 'C:/x', size: 1, blake3: 'a'.repeat(64) }))).toBe(
      'manifest_invalid',
    );
    expect(await withFiles((f) => f.push({ path: 'bin\\run.sh', size: 1, blake3: 'a'.repeat(64) }))).toBe(
      'manifest_invalid',
    );
  });

  it('refuses duplicate paths, also when they differ only in case', async () => {
    expect(await withFiles((f) => f.push({ ...(f[0] as Record<string, JsonValue>) }))).toBe(
      'manifest_invalid',
    );
    expect(await withFiles((f) => f.push({ ...(f[1] as Record<string, JsonValue>), path: 'RUN.wasm' }))).toBe(
      'manifest_invalid',
    );
  });

  it('refuses a file replaced by a symbolic link, even to identical content', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const p = join(built.dir, 'run.wasm');
    const copy = join(built.dir, '..', 'elsewhere.wasm');
    writeFileSync(copy, readFileSync(p));
    rmSync(p);
    symlinkSync(copy, p);
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'file_tampered',
    );
  });

  it('refuses a directory on the path replaced by a symbolic link', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const outside = join(built.dir, '..', 'outside-bin');
    const { renameSync } = await import('node:fs');
    renameSync(join(built.dir, 'bin'), outside);
    symlinkSync(outside, join(built.dir, 'bin'));
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'file_tampered',
    );
  });

  it('refuses a symbolic link as the envelope', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const p = join(built.dir, ENVELOPE_FILE);
    const moved = join(built.dir, '..', 'env.json');
    writeFileSync(moved, readFileSync(p));
    rmSync(p);
    symlinkSync(moved, p);
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'manifest_invalid',
    );
  });

  it('refuses a truncated or extended file as tampered', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    truncateSync(join(built.dir, 'run.wasm'), 4);
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe(
      'file_tampered',
    );
  });

  it('refuses files over the configured limit before reading them, and an oversized envelope', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const anchors = anchorsFor([keys]);
    expect(await codeOf(built.dir, { anchors, revocations: NO_REVOCATIONS, maxFileBytes: 8 })).toBe(
      'manifest_invalid',
    );
    expect(await codeOf(built.dir, { anchors, revocations: NO_REVOCATIONS, maxTotalBytes: 20 })).toBe(
      'manifest_invalid',
    );
    writeFileSync(join(built.dir, ENVELOPE_FILE), Buffer.alloc(1024 * 1024 + 1, 0x20));
    const err = await verifyPackage(built.dir, { anchors, revocations: NO_REVOCATIONS }).catch(
      (e: unknown) => e as PackageError,
    );
    expect(err).toMatchObject({ code: 'manifest_invalid' });
    expect((err as PackageError).message).toMatch(/larger than/);
  });
});

describe('verifyPackage: revocation', () => {
  it('refuses a revoked signer, a revoked artifact, and everything under a failed-closed list', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const anchors = anchorsFor([keys]);
    const bySigner = RevocationList.empty().add(
      { kind: 'signer', ref: toHex(keys.publicKey), revokedAtMs: 1 },
      keys,
    );
    expect(await codeOf(built.dir, { anchors, revocations: bySigner })).toBe('revoked');
    const file = built.package.files[0] as { blake3: string };
    const byArtifact = RevocationList.empty().add(
      { kind: 'artifact', ref: file.blake3, revokedAtMs: 1 },
      keys,
    );
    expect(await codeOf(built.dir, { anchors, revocations: byArtifact })).toBe('revoked');
    expect(await codeOf(built.dir, { anchors, revocations: RevocationList.failedClosed('unreadable') })).toBe(
      'revoked',
    );
    const unrelated = RevocationList.empty().add(
      { kind: 'package', ref: 'c'.repeat(64), revokedAtMs: 1 },
      keys,
    );
    expect(await codeOf(built.dir, { anchors, revocations: unrelated })).toBe('ok');
  });

  it('checks revocation after signatures but before hashing files', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    rmSync(join(built.dir, 'run.wasm'));
    const list = RevocationList.empty().add(
      { kind: 'package', ref: built.package.packageId, revokedAtMs: 1 },
      keys,
    );
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: list })).toBe('revoked');
  });
});

describe('verifyPackage: the revocation check is required', () => {
  it('cannot be left out (type level); NO_REVOCATIONS says explicitly that nothing is revoked', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    // @ts-expect-error: `revocations` is required, so forgetting the list cannot mean "nothing revoked"
    const forgotten: VerifyOptions = { anchors: anchorsFor([keys]) };
    expect(forgotten.revocations).toBeUndefined();
    expect(
      NO_REVOCATIONS.firstRevoked({ packageId: 'a'.repeat(64), signerKeys: [], artifactHashes: [] }),
    ).toBe(undefined);
    expect(await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: NO_REVOCATIONS })).toBe('ok');
    expect(
      await codeOf(built.dir, { anchors: anchorsFor([keys]), revocations: RevocationList.empty() }),
    ).toBe('ok');
  });
});

describe('verifyPackage: trust anchors by role', () => {
  it('accepts an operator key as a package signer too', async () => {
    const keys = generateKeyPair();
    const built = await buildSigned([keys]);
    const anchors = new TrustAnchors([{ id: 'ops', role: 'operator', publicKey: toHex(keys.publicKey) }]);
    expect((await verifyPackage(built.dir, { anchors, revocations: NO_REVOCATIONS })).signerIds).toEqual([
      'ops',
    ]);
  });
});
