import { defineConfig } from 'tsup';

// One file: the @heddle/* libraries and every pure-JS dependency are bundled. ws's optional
// bufferutil/utf-8-validate stay out (ws falls back to JS); better-sqlite3 is never loaded by this
// app (it only reaches the controller's operator API), but stays out of the bundle. The native
// BLAKE3 (@napi-rs/blake-hash, an optional dependency) is loaded at run time when installed. `require` is
// defined for the bundled CommonJS code (ws).
export default defineConfig({
  entry: ['src/bin.ts'],
  format: ['esm'],
  platform: 'node',
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
  noExternal: [/^(?!(better-sqlite3|@napi-rs\/blake-hash|bufferutil|utf-8-validate)(\/|$))/],
  external: ['better-sqlite3', '@napi-rs/blake-hash', 'bufferutil', 'utf-8-validate'],
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __heddleCreateRequire } from 'node:module';\nconst require = __heddleCreateRequire(import.meta.url);",
  },
});
