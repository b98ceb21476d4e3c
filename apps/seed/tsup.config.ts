import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineConfig } from 'tsup';

// One self-contained file: the @heddle/* libraries and every pure-JS dependency (zod, noble,
// hash-wasm) are bundled, so the published package has no dependencies and installs offline from its
// tarball (docs/seed.md). Its one optional dependency, the native BLAKE3 (@napi-rs/blake-hash,
// prebuilt), is used when npm installed it; the bundled WebAssembly BLAKE3 otherwise. `require` is defined for any bundled CommonJS code.
const runtimeDir = dirname(createRequire(import.meta.url).resolve('@heddle/runtime/package.json'));

export default defineConfig({
  entry: ['src/bin.ts'],
  format: ['esm'],
  platform: 'node',
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // Everything but the externals below is bundled.
  noExternal: [/^(?!(@napi-rs\/blake-hash|bufferutil|utf-8-validate)(\/|$))/],
  external: ['@napi-rs/blake-hash', 'bufferutil', 'utf-8-validate'],
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __heddleCreateRequire } from 'node:module';\nconst require = __heddleCreateRequire(import.meta.url);",
  },
  // The WASI runner is spawned as its own script (WASI_RUNNER_PATH resolves it beside the bundle).
  onSuccess: async () => {
    // The runner imports its WASI preview1 implementation from beside itself.
    for (const f of ['wasi-runner.mjs', 'wasi-preview1.mjs'])
      copyFileSync(join(runtimeDir, 'dist', f), `dist/${f}`);
  },
});
