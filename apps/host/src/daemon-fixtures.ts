// Test helpers (not part of the app): run the daemon as a real child process and read its logs.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { killLogged, type LoggedProcess, spawnLogged, waitForLog } from '@heddle/cli-kit';

// The daemon runs from source in a real child process: `node --import tsx src/bin.ts`, with a tsconfig
// whose paths map @heddle/* to the packages' sources (so no build is needed).
const here = fileURLToPath(new URL('.', import.meta.url));
const bin = join(here, 'bin.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const env = { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.source.json') };

/** A daemon child process and what it logged. */
export type Daemon = LoggedProcess;

/** Runs `heddle-host <args>` from source in `cwd`. */
export function spawnHost(args: readonly string[], cwd: string): Daemon {
  return spawnLogged(process.execPath, ['--import', tsx, bin, ...args], { cwd, env });
}

/** Waits for a log line with `msg` (fails when the daemon exits first). */
export const waitFor: typeof waitForLog = waitForLog;

/** Kills the daemon (SIGKILL) if it still runs and waits for it. */
export const kill: typeof killLogged = killLogged;
