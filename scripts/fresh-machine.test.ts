// The quick start on a machine with only Node and npm: a copy of this tree with nothing installed,
// a PATH that holds no pnpm, and the pinned pnpm bootstrapped by scripts/pnpm.mjs. Turbo (a child of
// pnpm) must find the pinned pnpm too, or it stops with "Unable to find package manager binary".
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'heddle-fresh-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** PATH without any directory that holds a `pnpm` (a global install must not hide a broken start). */
function pathWithoutPnpm(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d !== '' && !existsSync(join(d, 'pnpm')))
    .join(delimiter);
}

/** Copies the files git knows of (tracked, or new and not ignored): what a clone of this tree holds. */
function copyTree(to: string): void {
  const r = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  for (const rel of r.stdout.split('\0')) {
    if (rel !== '' && existsSync(join(root, rel))) cpSync(join(root, rel), join(to, rel));
  }
}

describe('fresh machine', () => {
  it('bootstraps the pinned pnpm and builds with turbo from a PATH without pnpm', () => {
    const clone = join(work, 'clone');
    copyTree(clone);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: pathWithoutPnpm() };
    for (const k of Object.keys(env)) {
      // Nothing of the outer pnpm run may leak in (its PATH entries, its npm_config_* settings).
      if (k.startsWith('npm_') || k.startsWith('PNPM_') || k === 'VITEST_POOL_ID') delete env[k];
    }
    env.PATH = pathWithoutPnpm();
    const which = spawnSync('sh', ['-c', 'command -v pnpm'], { env, encoding: 'utf8' });
    expect(which.stdout.trim()).toBe('');

    const run = (args: string[]) =>
      spawnSync(process.execPath, [join(clone, 'scripts', 'pnpm.mjs'), ...args], {
        cwd: clone,
        env,
        encoding: 'utf8',
        timeout: 480_000,
      });
    const boot = run(['--bootstrap']);
    expect(boot.status, boot.stderr + boot.stdout).toBe(0);
    const build = run([
      'exec',
      'turbo',
      'run',
      'build',
      '--filter=@heddle/envelope',
      '--output-logs=errors-only',
    ]);
    expect(build.status, build.stderr + build.stdout).toBe(0);
    expect(build.stdout + build.stderr).not.toMatch(/Unable to find package manager/);
    expect(existsSync(join(clone, 'packages', 'envelope', 'dist', 'index.js'))).toBe(true);
  }, 600_000);
});
