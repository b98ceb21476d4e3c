#!/usr/bin/env node
// Builds the dashboard (apps/controller/ui) into dist/ui: one ES module bundle (Preact and htm
// included: nothing is fetched from anywhere at run time), its stylesheet and its page. Run by
// `pnpm build` after tsup; `buildUi(outDir)` is also used by the browser tests.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const UI = resolve(here, '../ui');

/** Builds the dashboard into `outDir` (created); resolves with the files written. */
export async function buildUi(outDir = resolve(here, '../dist/ui')) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [join(UI, 'src/main.ts')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(UI, 'index.html'), join(outDir, 'index.html'));
  copyFileSync(join(UI, 'style.css'), join(outDir, 'style.css'));
  return ['app.js', 'index.html', 'style.css'];
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] === undefined ? undefined : resolve(process.argv[2]);
  const files = await buildUi(out);
  console.log(`dashboard: ${files.join(', ')}`);
}
