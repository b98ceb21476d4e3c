import { copyFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/testing.ts'],
  format: ['esm'],
  // Declarations come from tsc (tsconfig.build.json: per module, no second type check; the
  // typecheck task checks the sources, and isolatedDeclarations makes the emit need no types).
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The WASI runner (and its WASI preview1, which it imports) is a plain script spawned as its own process (see
  // src/wasi/wasi-process.ts): ship it beside dist/index.js, where WASI_RUNNER_PATH resolves it.
  onSuccess: async () => {
    copyFileSync('src/wasi/wasi-runner.mjs', 'dist/wasi-runner.mjs');
    copyFileSync('src/wasi/wasi-preview1.mjs', 'dist/wasi-preview1.mjs');
    // The fake container engine of ./testing (fakeEnginePath resolves it beside the bundle).
    copyFileSync('src/container/fixtures/fake-engine.mjs', 'dist/fake-engine.mjs');
  },
});
