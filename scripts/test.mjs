#!/usr/bin/env node
// The README's test command: install, build, run every test once, and print `N passed, N failed`
// computed from vitest's own JSON report. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const report = join(root, '.ci', 'report.json');
const pnpm = (args) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'pnpm.mjs'), ...args], { stdio: 'inherit', cwd: root })
    .status ?? 1;

for (const step of [['--bootstrap'], ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']]) {
  const code = pnpm(step);
  if (code !== 0) process.exit(code);
}
rmSync(report, { force: true });
const code = pnpm([
  'exec',
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);
if (!existsSync(report)) {
  console.log('0 passed, 1 failed');
  process.exit(code || 1);
}
const r = JSON.parse(readFileSync(report, 'utf8'));
// Failed tests, plus test files that failed without any failed test (a file that did not load).
// vitest's numFailedTestSuites also counts describe blocks, so it is not used.
const brokenFiles = r.testResults.filter(
  (f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed'),
).length;
const failed = r.numFailedTests + brokenFiles;
console.log(`${r.numPassedTests} passed, ${failed} failed`);
process.exit(code !== 0 || failed > 0 || r.numPassedTests === 0 ? code || 1 : 0);
