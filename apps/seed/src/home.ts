import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CliIo } from './io.js';

/** The environment variable naming the default Seed profile directory. */
export const SEED_HOME_ENV = 'HEDDLE_SEED_HOME';

/** The files of a Seed profile directory. */
export const PROFILE_FILES = {
  /** url, SPKI pin, allow_plain_http, client_name (written by `init`). */
  profile: 'seed.json',
  /** The bearer token (mode 0600, written by `pair`; never printed). */
  token: 'token',
  /** The operator's pins: `[{id, version, sha256?, console_commands}]`. */
  pins: 'pins.json',
  /** The local audit chain. */
  chain: 'chain.jsonl',
  /** An optional `@heddle/gate` policy (default: the built-in one, see policy.ts). */
  policy: 'policy.json',
  /** The cogs this tool loaded (and whether it installed them), for `adopt` on later runs. */
  installed: 'installed.json',
} as const;

/**
 * The profile directory: `flag` (relative to `io.cwd`) when given, else `$HEDDLE_SEED_HOME`, else
 * `~/.heddle-seed`.
 */
export function homeDir(flag: string | undefined, io: Pick<CliIo, 'cwd' | 'env'>): string {
  if (flag !== undefined && flag !== '') return resolve(io.cwd, flag);
  const env = io.env ?? process.env;
  const fromEnv = env[SEED_HOME_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(io.cwd, fromEnv);
  return join(homedir(), '.heddle-seed');
}

/** The path of one profile file. */
export function profilePath(home: string, file: keyof typeof PROFILE_FILES): string {
  return join(home, PROFILE_FILES[file]);
}
