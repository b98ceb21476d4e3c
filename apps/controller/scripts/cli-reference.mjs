#!/usr/bin/env node
// Generates docs/cli-reference.md from the command definitions (apps/controller/src/cli-reference.ts).
// Usage: node apps/controller/scripts/cli-reference.mjs [--check]
// With --check it writes nothing and exits 1 when the committed file differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const target = `${root}docs/cli-reference.md`;
const { cliReference } = await tsImport('../src/cli-reference.ts', import.meta.url);
const text = cliReference();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  if (current !== text) {
    process.stderr.write(
      'docs/cli-reference.md is out of date: run node apps/controller/scripts/cli-reference.mjs\n',
    );
    process.exit(1);
  }
  process.stdout.write('docs/cli-reference.md is up to date\n');
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
