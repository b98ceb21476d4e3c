import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

// The @heddle/* libraries and every pure-JS dependency (zod, ws, noble, hash-wasm) are bundled; the
// one dependency left is better-sqlite3 (a native addon: the controller's state store), so the
// published package installs with npm alone (docs/operator-guide.md, "Install"). The native BLAKE3
// (@napi-rs/blake-hash, prebuilt) is an optional dependency loaded at run time when installed. ws's optional
// bufferutil/utf-8-validate stay out (ws falls back to JS). `require` is defined for the bundled
// CommonJS code (ws) and for better-sqlite3. `pg` (an optional dependency, for a PostgreSQL state) is
// never imported: the PostgreSQL store's worker thread requires it by the path resolved at run time.
const runtimeDir = dirname(createRequire(import.meta.url).resolve('@heddle/runtime/package.json'));

// zod's `z.locales` namespace (every locale) is replaced by English only: a command that uses zod then
// loads about 360 KB less (src/zod-locales-en.ts says why); no Heddle code reads `z.locales`.
const englishOnlyZod: Plugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)
        ? { path: join(import.meta.dirname, 'src', 'zod-locales-en.ts') }
        : undefined,
    );
  },
};

export default defineConfig({
  entry: ['src/bin.ts', 'src/demo.ts', 'src/tour.ts'],
  format: ['esm'],
  platform: 'node',
  dts: false,
  clean: true,
  esbuildPlugins: [englishOnlyZod],
  sourcemap: true,
  target: 'node20',
  // Everything but the externals below is bundled.
  noExternal: [/^(?!(better-sqlite3|@napi-rs\/blake-hash|bufferutil|utf-8-validate)(\/|$))/],
  external: ['better-sqlite3', '@napi-rs/blake-hash', 'bufferutil', 'utf-8-validate'],
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
