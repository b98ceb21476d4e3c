// Assembles hello.wat into hello.wasm with wabt (pure JS/wasm, a devDependency of @heddle/runtime).
// The bytes are deterministic: no names section, no debug info. Run: node examples/wasi-cog/build.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// wabt is installed for packages/runtime; resolve it from there so this script runs from any cwd.
const require = createRequire(join(here, '..', '..', 'packages', 'runtime', 'package.json'));
const wabt = await require('wabt')();

/** Assembles examples/wasi-cog/hello.wat; returns the wasm bytes and writes hello.wasm. */
export function build() {
  const mod = wabt.parseWat('hello.wat', readFileSync(join(here, 'hello.wat'), 'utf8'), {
    bulk_memory: true,
  });
  try {
    mod.resolveNames();
    mod.validate();
    const { buffer } = mod.toBinary({ log: false, write_debug_names: false });
    const bytes = new Uint8Array(buffer);
    writeFileSync(join(here, 'hello.wasm'), bytes);
    return bytes;
  } finally {
    mod.destroy();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const bytes = build();
  console.log(`examples/wasi-cog/hello.wasm: ${bytes.length} bytes`);
}
