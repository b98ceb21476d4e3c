import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CliIo } from './io.js';

export { API_INFO_FILE, API_TOKEN_FILE } from '@heddle/operator-api/http';

/** The controller configuration file in the home. */
export const CONTROLLER_CONFIG_FILE = 'controller.json';
/** The controller's key file in the home (mode 0600). */
export const CONTROLLER_KEY_FILE = 'controller.key';
/** The environment variable naming the controller home. */
export const HOME_ENV = 'HEDDLE_HOME';
/** The environment variable naming the context to use (over the current one). */
export const CONTEXT_ENV = 'HEDDLE_CONTEXT';
/** The environment variable giving the controller's address (over a context's URL). */
export const ADDR_ENV = 'HEDDLE_ADDR';

/**
 * The controller home: `flag` (relative to `io.cwd`) when given, else `$HEDDLE_HOME`, else
 * `~/.heddle`. Every command that touches the controller (init, controller run, and the commands that
 * talk to the daemon) resolves its home with this.
 */
export function homeDir(
  flag: string | undefined,
  io: Pick<CliIo, 'cwd'>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (flag !== undefined && flag !== '') return resolve(io.cwd, flag);
  const fromEnv = env[HOME_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(io.cwd, fromEnv);
  return join(homedir(), '.heddle');
}
