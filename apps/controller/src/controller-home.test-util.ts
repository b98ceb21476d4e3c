import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCaptured } from './test-io.js';

/**
 * A controller home made by `heddle init` (API on a free port) in `cwd/name`, with `settings` merged
 * into its controller.json (for example a PostgreSQL `state` or `leader_database_url`, and short
 * refresh periods). Returns the home's path.
 */
export async function controllerHome(
  cwd: string,
  name: string,
  settings: Readonly<Record<string, unknown>>,
): Promise<string> {
  const home = join(cwd, name);
  expect((await runCaptured(['init', '--home', home, '--api-port', '0'], cwd)).code).toBe(0);
  const path = join(home, 'controller.json');
  // cast: the file init just wrote is a JSON object
  const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  writeFileSync(path, JSON.stringify({ ...config, ...settings }));
  return home;
}
