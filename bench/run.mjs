#!/usr/bin/env node
// Runs every bench/*.bench.mjs (or those named on the command line) one after another, each in its own
// process so that one benchmark's garbage does not slow the next. Figures are ratios against a baseline
// measured in the same run; see bench/README.md.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n## ${f}`);
  const r = spawnSync(process.execPath, ['--expose-gc', join(dir, f)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
