// A test package (not for production use): the example hello-cog as a native-only package, optionally
// made to fail at once, for tests of health checks and rolling updates (in-process and daemon tests).
import { chmodSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { KeyPair } from '@heddle/envelope';
import { buildCogPackage } from '@heddle/package';
import { publisherKeys, tempDir } from './test-plane.js';

const HELLO = resolve(import.meta.dirname, '../../../examples/hello-cog');
let builds = 0;

/**
 * hello-cog as a native-only package with a version of its own (a new manifest hash each call),
 * signed by `keys` (default {@link publisherKeys}); run as a listener it keeps running. `fail`: its
 * program prints one line to standard error and exits with 3 at once (a version whose instances never
 * become healthy). Returns the package directory.
 */
export async function nativePackage(fail: boolean, keys: KeyPair = publisherKeys): Promise<string> {
  const src = join(tempDir('heddle-job-src-'), 'src');
  cpSync(HELLO, src, { recursive: true });
  rmSync(join(src, 'hello.wasm'));
  // cast: the example's cog.json is an object with these fields
  const cog = JSON.parse(readFileSync(join(src, 'cog.json'), 'utf8')) as {
    version: string;
    variants: Record<string, string>;
    console?: unknown;
  };
  cog.version = `2.0.${++builds}`;
  delete cog.variants['wasm32-wasi'];
  delete cog.console;
  writeFileSync(join(src, 'cog.json'), JSON.stringify(cog));
  if (fail) {
    writeFileSync(join(src, 'bin/hello.sh'), '#!/bin/sh\necho "failing on purpose" >&2\nexit 3\n');
    chmodSync(join(src, 'bin/hello.sh'), 0o755);
  }
  const out = join(tempDir('heddle-job-pkg-'), 'pkg');
  await buildCogPackage(src, out, { keys: [keys] });
  return out;
}
