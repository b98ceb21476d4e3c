import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './cli.js';
import type { CliIo } from './io.js';

/** The result of one in-process CLI run: exit code and captured output. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** A fresh temporary directory for a test. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'heddle-seed-'));
}

/** Runs the CLI in process with captured output (test helper; not for `simulator`, which blocks). */
export async function runCaptured(argv: readonly string[], cwd: string): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), cwd, env: {} };
  const code = await runCli(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}
