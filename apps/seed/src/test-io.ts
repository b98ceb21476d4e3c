import { type CliRun, runCaptured as capture, tempDir as kitTempDir } from '@heddle/cli-kit/testing';
import { runCli } from './cli.js';

export type { CliRun } from '@heddle/cli-kit/testing';

/** A fresh temporary directory for a test. */
export function tempDir(): string {
  return kitTempDir('heddle-seed-');
}

/** Runs the CLI in process with captured output (test helper; not for `simulator`, which blocks). */
export function runCaptured(argv: readonly string[], cwd: string): Promise<CliRun> {
  return capture(runCli, argv, { cwd, env: {} });
}
