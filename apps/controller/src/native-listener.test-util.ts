// A test tool (not part of the app): the example hello-cog as a native-only listener package with a
// version of its own, asking for the least CPU and memory (1 % and 1 MB) (so that a trial's many orders never meet a node's
// capacity), signed by the keys given.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyPair } from '@heddle/envelope';
import { buildCogPackage } from '@heddle/package';
import { HELLO_COG } from './daemon-fixtures.js';
import { tempDir } from './test-io.js';

let builds = 0;

/** Builds the package; returns its directory and its version (`3.0.<n>`). */
export async function nativeListener(keys: KeyPair): Promise<{ dir: string; version: string }> {
  const src = join(tempDir(), 'src');
  cpSync(HELLO_COG, src, { recursive: true });
  rmSync(join(src, 'hello.wasm'));
  // cast: the example's cog.json is an object with these fields
  const cog = JSON.parse(readFileSync(join(src, 'cog.json'), 'utf8')) as {
    version: string;
    variants: Record<string, string>;
    resources: { cpu_pct: number; ram_mb: number };
    console?: unknown;
  };
  cog.version = `3.0.${++builds}`;
  delete cog.variants['wasm32-wasi'];
  delete cog.console;
  cog.resources = { cpu_pct: 1, ram_mb: 1 };
  writeFileSync(join(src, 'cog.json'), JSON.stringify(cog));
  const dir = join(tempDir(), 'pkg');
  await buildCogPackage(src, dir, { keys: [keys] });
  return { dir, version: cog.version };
}
