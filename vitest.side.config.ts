import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The side run: the long namespace fault tests (apps/*/src/**/*.side.test.ts: the 32 namespace trials
// and the CI soak), which the main run leaves out. scripts/test.mjs starts it beside the main run and
// counts both; alone: npx vitest run --config vitest.side.config.ts
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['apps/*/src/**/*.side.test.ts'],
    exclude: ['**/node_modules/**'],
    hookTimeout: 120_000,
    // One file at a time, as before the main run took two: the 5-minute soak and the trials do not
    // share the machine with each other (their fault windows are timed), only with the main run.
    maxWorkers: 1,
  },
});
