// Test helpers of the WASI adapter (not exported from the package): assemble the WAT guests in this
// directory with wabt and wrap them in signed, verified cog packages.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, toHex } from '@heddle/envelope';
import {
  buildCogPackage,
  type CogSource,
  NO_REVOCATIONS,
  TrustAnchors,
  verifyPackage,
} from '@heddle/package';
import wabtInit from 'wabt';
import { type RuntimeWorkload, workloadFromPackage } from '../workload.js';

const here = fileURLToPath(new URL('.', import.meta.url));
let wabt: Awaited<ReturnType<typeof wabtInit>> | undefined;

/** Assembles WAT text into wasm bytes. */
export async function assembleWat(name: string, text: string): Promise<Uint8Array> {
  wabt ??= await wabtInit();
  const mod = wabt.parseWat(name, text, { bulk_memory: true });
  try {
    mod.resolveNames();
    mod.validate();
    return new Uint8Array(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}

/** Assembles the fixture `<name>.wat` of this directory. */
export function fixtureWasm(name: string): Promise<Uint8Array> {
  return assembleWat(`${name}.wat`, readFileSync(join(here, `${name}.wat`), 'utf8'));
}

/**
 * A fresh temporary directory, searchable by others: on a root host the runners run as `nobody`,
 * which must reach the data directories made inside it.
 */
export function tempDir(prefix = 'heddle-wasi-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

/** A signed and verified cog package holding `wasm` as its `wasm32-wasi` variant. */
export async function wasiWorkload(
  wasm: Uint8Array | string,
  overrides: Partial<CogSource> = {},
): Promise<RuntimeWorkload> {
  const src = tempDir('heddle-wasi-src-');
  const source: CogSource = {
    id: 'wasi-test',
    version: '1.0.0',
    variants: { 'wasm32-wasi': 'guest.wasm' },
    config: { greeting: { type: 'string', default: 'hi', max_length: 32 } },
    console: [{ name: 'status' }],
    resources: { cpu_pct: 10, ram_mb: 16 },
    ...overrides,
  };
  writeFileSync(join(src, 'cog.json'), JSON.stringify(source));
  writeFileSync(join(src, 'guest.wasm'), wasm);
  const key = generateKeyPair();
  const out = join(tempDir('heddle-wasi-pkg-'), 'pkg');
  await buildCogPackage(src, out, { keys: [key] });
  const anchors = new TrustAnchors([{ id: 'k0', role: 'publisher', publicKey: toHex(key.publicKey) }]);
  return workloadFromPackage(await verifyPackage(out, { anchors, revocations: NO_REVOCATIONS }));
}
