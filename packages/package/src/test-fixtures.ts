// Shared helpers for this package's tests (not exported from the package).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { generateKeyPair, type KeyPair, keyPairFromSecret, toHex } from '@heddle/envelope';
import { type BuildResult, buildCogPackage } from './build.js';
import type { CogSource } from './cog-source.js';
import { type TrustAnchor, TrustAnchors } from './trust.js';

/** A fresh temporary directory. */
export function tempDir(prefix = 'heddle-pkg-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A fixed key pair from a one-byte seed pattern (deterministic tests). */
export function fixedKeys(seedByte: number): KeyPair {
  return keyPairFromSecret(new Uint8Array(32).fill(seedByte));
}

/** A minimal valid cog source. */
export function sampleSource(overrides: Partial<CogSource> = {}): CogSource {
  return {
    id: 'sample',
    version: '1.0.0',
    variants: { 'x86_64-native': 'bin/run.sh', 'wasm32-wasi': 'run.wasm' },
    config: { rate: { type: 'integer', min: 1, max: 10, default: 2 } },
    console: [{ name: 'status' }],
    resources: { cpu_pct: 10, ram_mb: 32 },
    ...overrides,
  };
}

/** Writes a source directory: `cog.json` plus the given files. */
export function writeSource(
  source: CogSource = sampleSource(),
  files: Record<string, string | Uint8Array> = {
    'bin/run.sh': '#!/bin/sh\necho hi\n',
    'run.wasm': new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]),
  },
): string {
  const dir = tempDir('heddle-src-');
  writeFileSync(join(dir, 'cog.json'), JSON.stringify(source, null, 2));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** Trust anchors pinning `keys` as publishers (ids `k0`, `k1`, ...). */
export function anchorsFor(
  keys: readonly KeyPair[],
  threshold = 1,
  role: TrustAnchor['role'] = 'publisher',
): TrustAnchors {
  return new TrustAnchors(
    keys.map((k, i) => ({ id: `k${i}`, role, publicKey: toHex(k.publicKey) })),
    threshold,
  );
}

/** Builds the sample source into a fresh directory, signed by `keys`. */
export async function buildSigned(
  keys: readonly KeyPair[] = [generateKeyPair()],
  source?: CogSource,
): Promise<BuildResult> {
  const src = source === undefined ? writeSource() : writeSource(source);
  return buildCogPackage(src, join(tempDir(), 'pkg'), { keys });
}
