// Pins the worked examples of docs/package-format.md and docs/trust-and-revocation.md: if this test
// fails, the format changed (or examples/hello-cog did) and the documents must be updated with it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toHex } from '@heddle/envelope';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { describe, expect, it } from 'vitest';
import { buildCogPackage } from './build.js';
import { ENVELOPE_FILE } from './limits.js';
import { artifactId, computePieceMap } from './pieces.js';
import { RevocationList } from './revocation-list.js';
import { fixedKeys, tempDir } from './test-fixtures.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const doc = readFileSync(join(root, 'docs', 'package-format.md'), 'utf8');
const trustDoc = readFileSync(join(root, 'docs', 'trust-and-revocation.md'), 'utf8');

describe('docs/package-format.md worked example', () => {
  it('matches what the code computes for examples/hello-cog signed with the all-0x01 seed', async () => {
    const keys = fixedKeys(1);
    const built = await buildCogPackage(join(root, 'examples', 'hello-cog'), join(tempDir(), 'pkg'), {
      keys: [keys],
    });
    const envelope = readFileSync(join(built.dir, ENVELOPE_FILE), 'utf8');
    const p = built.package;
    expect(toHex(keys.publicKey)).toBe('8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c');
    expect(p.packageId).toBe('b22b94a6ecf962ce190d00bb4ed8042e16988f2df1c25a31e89eb285be08efbc');
    expect(p.manifestHash).toBe('21c41ada8bc2648870c9b7cac876820d2890a8d3ce7fdabeafc761e23612c40b');
    expect(p.packageId).toBe(toHex(nobleBlake3(p.statement)));
    expect(p.manifestHash).toBe(toHex(nobleBlake3(new TextEncoder().encode(envelope))));
    for (const value of [
      p.packageId,
      p.manifestHash,
      ...p.files.map((f) => f.blake3),
      p.envelope.signatures[0]?.signature,
    ]) {
      expect(doc).toContain(value);
    }
    expect(doc).toContain(envelope.trimEnd());
  });

  it('matches the piece map and artifact id example', () => {
    const bytes = new Uint8Array(40000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = i % 251;
    const map = computePieceMap(bytes, 16384);
    expect(artifactId(map)).toBe('72b3dedaf035ff70b0cc47981fb0e87818d599b6d584c775c18fab74970aa0be');
    for (const h of [map.contentHash, ...map.pieceHashes, artifactId(map)]) expect(doc).toContain(h);
  });

  it('matches the revocation list example', () => {
    const keys = fixedKeys(1);
    const list = RevocationList.empty().add(
      {
        kind: 'package',
        ref: 'b22b94a6ecf962ce190d00bb4ed8042e16988f2df1c25a31e89eb285be08efbc',
        revokedAtMs: 1767225600000,
        reason: 'example',
      },
      keys,
      { now: 1767225600000, validForMs: 30 * 24 * 3600 * 1000 },
    );
    expect(trustDoc).toContain(list.encode().trimEnd());
  });
});
