import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Every workspace package resolves to its TypeScript source, so tests never run against a stale build.
const pkgDir = fileURLToPath(new URL('./packages/', import.meta.url));
// Subpath entries (`@heddle/envelope/browser`) map to their own source file, before the package names.
const alias = [
  { find: /^@heddle\/envelope\/browser$/, replacement: `${pkgDir}envelope/src/browser.ts` },
  // Every other subpath entry (`@heddle/control-plane/testing`) is `src/<subpath>.ts` of its package.
  { find: /^@heddle\/([a-z-]+)\/([a-z-]+)$/, replacement: `${pkgDir}$1/src/$2.ts` },
  ...readdirSync(pkgDir).map((name) => ({
    find: new RegExp(`^@heddle/${name}$`),
    replacement: `${pkgDir}${name}/src/index.ts`,
  })),
];

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'scripts/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
