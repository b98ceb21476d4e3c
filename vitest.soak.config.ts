import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The soak run (scripts/test.mjs starts it beside the main run when HEDDLE_SOAK_MINUTES is set): the
// same aliases and pool, only the *.soak.ts files, which the main run's include leaves out.
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['apps/*/src/**/*.soak.ts'], hookTimeout: 120_000 },
});
