import { defineConfig } from 'tsup';

export default defineConfig({
  entry: [
    'src/index.ts',
    'src/contract.ts',
    'src/driver.ts',
    'src/sqlite.ts',
    'src/leader.ts',
    'src/postgres.ts',
    'src/testing.ts',
  ],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
});
