import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StaticUi } from '@heddle/operator-api';

/**
 * The built dashboard's directory: `ui/` beside the bundle (`dist/ui`, written by
 * `scripts/build-ui.mjs`), or `../dist/ui` when running from the sources; undefined when it was not
 * built (the controller then serves no dashboard).
 */
export function dashboardDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'ui'), join(here, '../dist/ui')]) {
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return undefined;
}

/** The dashboard's files from `dir` (default {@link dashboardDir}), or undefined when there are none. */
export function loadDashboard(dir: string | undefined = dashboardDir()): StaticUi | undefined {
  return dir === undefined ? undefined : new StaticUi(dir);
}
