import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  // Declarations come from tsc (tsconfig.build.json: per module, no second type check; the
  // typecheck task checks the sources, and isolatedDeclarations makes the emit need no types).
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
});
