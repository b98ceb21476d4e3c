import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Every workspace package resolves to its TypeScript source, so tests never run against a stale build.
// Each entry of a package's `exports` map (`.`, `./browser`, `./testing`, ...) maps to the source file
// its built file comes from: `./dist/foo.js` is built from `./src/foo.ts`.
const pkgDir = fileURLToPath(new URL('./packages/', import.meta.url));

interface ExportEntry {
  readonly import?: string | { readonly default?: string };
}

function sourceOf(name: string, target: string): string {
  return `${pkgDir}${name}/${target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')}`;
}

function aliasesOf(name: string): { find: RegExp; replacement: string }[] {
  const manifest = `${pkgDir}${name}/package.json`;
  if (!existsSync(manifest)) return [];
  const exportsMap = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, unknown> })
    .exports;
  const out: { find: RegExp; replacement: string }[] = [];
  for (const [key, value] of Object.entries(exportsMap ?? {})) {
    if (key === './package.json' || typeof value !== 'object' || value === null) continue;
    const imp = (value as ExportEntry).import;
    const target = typeof imp === 'string' ? imp : imp?.default;
    if (target === undefined) continue;
    const sub = key === '.' ? '' : key.slice(1);
    const escaped = `@heddle/${name}${sub}`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    out.push({ find: new RegExp(`^${escaped}$`), replacement: sourceOf(name, target) });
  }
  return out;
}

// Subpath entries come first so that `@heddle/x/testing` never falls through to `@heddle/x`.
const alias = readdirSync(pkgDir)
  .flatMap(aliasesOf)
  .sort((a, b) => b.find.source.length - a.find.source.length);

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'scripts/*.test.ts'],
    // The side run's files (vitest.side.config.ts), run beside this one by scripts/test.mjs.
    exclude: ['**/node_modules/**', '**/*.side.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // At least two test files at a time. vitest's own default (the CPU count minus one) is one file at a
    // time on a 2-CPU machine, where most files spend most of their time waiting on the daemons and
    // child processes they start (a lone worker used about half of one CPU). Measured on a quiet 2-CPU
    // machine, packages/runtime and packages/host-service: 102 s with one worker, 54 s with two.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
