// Shared by the package and wire benchmarks: a signed cog package holding one file of random bytes.
import { randomFillSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCogPackage } from '@heddle/package';

/** Builds `<dir>/pkg` from `<dir>/src` with one `size`-byte file `bin/big`, signed by `keys`. */
export async function buildBigPackage(dir, keys, size) {
  const bytes = new Uint8Array(size);
  for (let off = 0; off < size; off += 65536) randomFillSync(bytes, off, Math.min(65536, size - off));
  const src = join(dir, 'src');
  mkdirSync(join(src, 'bin'), { recursive: true });
  writeFileSync(join(src, 'bin', 'big'), bytes);
  writeFileSync(
    join(src, 'cog.json'),
    JSON.stringify({
      id: 'big',
      version: '1.0.0',
      variants: { 'x86_64-native': 'bin/big' },
      resources: { cpu_pct: 10, ram_mb: 64 },
    }),
  );
  const built = await buildCogPackage(src, join(dir, 'pkg'), { keys: [keys] });
  return { built, bytes };
}
