// Test helpers for the native adapter: real signed packages built from small /bin/sh scripts.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { generateKeyPair, toHex } from '@heddle/envelope';
import {
  buildCogPackage,
  type CogBody,
  type CogSource,
  NO_REVOCATIONS,
  TrustAnchors,
  verifyPackage,
} from '@heddle/package';
import { hostCogArch } from '../probe/elf.js';
import { type RuntimeWorkload, workloadFromPackage } from '../workload.js';

/** A fresh temporary directory, world-traversable so that `nobody` can reach files below it. */
export function tempDir(prefix = 'heddle-native-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(d, 0o755);
  return d;
}

/** Builds, signs and verifies a cog whose native variant for this host is `script` (or raw bytes). */
export async function scriptWorkload(
  script: string | Uint8Array,
  overrides: Partial<CogSource> = {},
): Promise<RuntimeWorkload> {
  const arch = hostCogArch() ?? 'x86_64';
  const src = tempDir('heddle-native-src-');
  const source: CogSource = {
    id: 'test-cog',
    version: '1.0.0',
    variants: { [`${arch}-native`]: 'bin/run.sh' },
    config: {
      label: { type: 'string', max_length: 32, default: 'x' },
      count: { type: 'integer', min: 1, max: 5, default: 1 },
    },
    console: [{ name: 'status' }],
    resources: { cpu_pct: 10, ram_mb: 32 },
    ...overrides,
  };
  writeFileSync(join(src, 'cog.json'), JSON.stringify(source));
  for (const file of new Set(Object.values(source.variants))) {
    mkdirSync(dirname(join(src, file)), { recursive: true });
    writeFileSync(join(src, file), script);
  }
  const keys = generateKeyPair();
  const out = join(tempDir('heddle-native-pkg-'), 'pkg');
  await buildCogPackage(src, out, { keys: [keys] });
  const anchors = new TrustAnchors([{ id: 't', role: 'publisher', publicKey: toHex(keys.publicKey) }]);
  return workloadFromPackage(await verifyPackage<CogBody>(out, { anchors, revocations: NO_REVOCATIONS }));
}
