import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from './run-captured.js';

/** What {@link modulesLoaded} saw: the exit code, and the URL of every module the process loaded. */
export interface ModulesLoaded {
  /** The process's exit code (null when a signal ended it). */
  readonly code: number | null;
  /** Every module URL loaded, in order (`file:`, `node:`, ...). */
  readonly urls: readonly string[];
}

// Registered with `node:module`'s `register`: records the URL of every module loaded, then loads it.
const HOOKS = `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
  appendFileSync(out, url + '\\n');
  return next(url, context);
}`;

/**
 * Runs `node <args>` (a test helper) with a module hook that records every module the process loads,
 * and returns them: how a test proves that `--help` loads none of the crypto or validation stack.
 * `args` may start with other `--import` hooks (`--import tsx`): the recording sees what they load too.
 */
export function modulesLoaded(
  args: readonly string[],
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv },
): ModulesLoaded {
  const dir = tempDir('heddle-modules-');
  const out = join(dir, 'loaded.txt');
  writeFileSync(out, '');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, HOOKS);
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { out: ${JSON.stringify(out)} } });\n`,
  );
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, ...args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
  });
  return {
    code: r.status,
    urls: readFileSync(out, 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  };
}
