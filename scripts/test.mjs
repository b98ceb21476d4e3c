#!/usr/bin/env node
// The README's test command: install, build, run every test once, and print `N passed, N failed`
// computed from vitest's own JSON report. Extra arguments go to vitest.
// The whole suite (no extra arguments) also starts the side run (vitest.side.config.ts: the long
// namespace fault tests, apps/*/src/**/*.side.test.ts, which the main run leaves out) in a second
// vitest process beside the main run, and counts its tests in the same line from its own JSON report.
// Its soak runs for HEDDLE_SOAK_MINUTES (CI sets 5; unset: the soak test is skipped).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const report = join(root, '.ci', 'report.json');
const soakReport = join(root, '.ci', 'side-report.json');
const pnpm = (args) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'pnpm.mjs'), ...args], { stdio: 'inherit', cwd: root })
    .status ?? 1;

for (const step of [['--bootstrap'], ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']]) {
  const code = pnpm(step);
  if (code !== 0) process.exit(code);
}
rmSync(report, { force: true });
rmSync(soakReport, { force: true });
// The side run starts first and runs beside the main run (its output prefixed, so the two read apart).
const soak =
  process.argv.length <= 2
    ? new Promise((resolve) => {
        const child = spawn(
          process.execPath,
          [
            join(root, 'scripts', 'pnpm.mjs'),
            'exec',
            'vitest',
            'run',
            '--config',
            'vitest.side.config.ts',
            '--reporter=default',
            '--reporter=json',
            `--outputFile.json=${soakReport}`,
          ],
          { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        const prefix = (stream, out) => {
          let rest = '';
          stream.on('data', (d) => {
            const lines = (rest + d.toString()).split('\n');
            rest = lines.pop() ?? '';
            for (const l of lines) out.write(`[side] ${l}\n`);
          });
        };
        prefix(child.stdout, process.stdout);
        prefix(child.stderr, process.stderr);
        child.on('exit', (c) => resolve(c ?? 1));
      })
    : undefined;
const code = pnpm([
  'exec',
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);
const soakCode = soak === undefined ? 0 : await soak;

/** Passed and failed of one vitest JSON report (a missing report: one failure). */
function counts(file) {
  if (!existsSync(file)) return { passed: 0, failed: 1 };
  const r = JSON.parse(readFileSync(file, 'utf8'));
  // Failed tests, plus test files that failed without any failed test (a file that did not load).
  // vitest's numFailedTestSuites also counts describe blocks, so it is not used.
  const brokenFiles = r.testResults.filter(
    (f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed'),
  ).length;
  return { passed: r.numPassedTests, failed: r.numFailedTests + brokenFiles };
}
const main = counts(report);
const extra = soak === undefined ? { passed: 0, failed: 0 } : counts(soakReport);
const passed = main.passed + extra.passed;
const failed = main.failed + extra.failed;
console.log(`${passed} passed, ${failed} failed`);
const anyCode = code !== 0 ? code : soakCode;
process.exit(anyCode !== 0 || failed > 0 || main.passed === 0 ? anyCode || 1 : 0);
