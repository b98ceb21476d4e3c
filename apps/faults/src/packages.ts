// The signed packages the trials place: the example WASI cog (under 1 KiB, dies with its host), the
// example native cog (a shell script that runs detached and outlives a host killed with SIGKILL), and
// the native cog with a large extra file, so that its transfer takes long enough to be interrupted.
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KeyPair } from '@heddle/envelope';
import { buildCogPackage } from '@heddle/package';

const EXAMPLES = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'examples');

/** A built, signed package directory and what names it. */
export interface BuiltPackage {
  /** Absolute path of the package directory (what `place` is given as `package_dir`). */
  readonly dir: string;
  readonly workload: string;
  readonly manifestHash: string;
  /** Total bytes of its files (what a host fetches). */
  readonly bytes: number;
}

/** The kinds of package a trial may place. */
export type PackageKind = 'wasi' | 'native' | 'native-big';

async function build(
  example: string,
  into: string,
  signer: KeyPair,
  change: (cog: Record<string, unknown>, dir: string) => void,
): Promise<BuiltPackage> {
  const src = join(into, `${example}-src`);
  cpSync(join(EXAMPLES, example), src, { recursive: true });
  const cogPath = join(src, 'cog.json');
  // cast: a cog.json of this repository's examples, edited by `change` and written back as is.
  const cog = JSON.parse(readFileSync(cogPath, 'utf8')) as Record<string, unknown>;
  change(cog, src);
  writeFileSync(cogPath, JSON.stringify(cog));
  const out = join(into, `${example}-${String(cog.version)}`);
  const built = await buildCogPackage(src, out, { keys: [signer] });
  return {
    dir: out,
    workload: String(cog.id),
    manifestHash: built.package.manifestHash,
    bytes: built.package.files.reduce((n, f) => n + f.size, 0),
  };
}

/**
 * Builds the package of `kind` into `dir`, signed by `signer`: `wasi` (examples/wasi-cog), `native`
 * (examples/native-cog) or `native-big` (examples/native-cog with `bigBytes` of random data listed
 * in its files, default 3 MiB).
 */
export function buildPackage(
  kind: PackageKind,
  dir: string,
  signer: KeyPair,
  bigBytes: number = 3 * 1024 * 1024,
): Promise<BuiltPackage> {
  switch (kind) {
    case 'wasi':
      return build('wasi-cog', dir, signer, (cog) => {
        cog.version = '0.8.0';
      });
    case 'native':
      return build('native-cog', dir, signer, (cog) => {
        cog.version = '0.8.0';
      });
    case 'native-big':
      return build('native-cog', dir, signer, (cog, src) => {
        cog.id = 'native-big-cog';
        cog.version = '0.8.1';
        writeFileSync(join(src, 'ballast.bin'), randomBytes(bigBytes));
        cog.files = ['ballast.bin'];
      });
  }
}
