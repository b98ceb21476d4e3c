import { type CliRun, runCaptured as capture, tempDir as kitTempDir } from '@heddle/cli-kit/testing';
import { runCli } from './cli.js';

export type { CliRun } from '@heddle/cli-kit/testing';

/** A fresh temporary working directory for a test. */
export function tempDir(): string {
  return kitTempDir('heddle-cli-');
}

/** Runs the CLI in process with captured output (test helper). */
export function runCaptured(argv: readonly string[], cwd: string): Promise<CliRun> {
  return capture(runCli, argv, { cwd });
}
