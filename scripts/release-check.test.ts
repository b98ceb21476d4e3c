// Cutting a release works: scripts/release-check.mjs runs `changeset version` on a scratch copy of
// the tree, packs every public package and runs `npm publish --dry-run` on each tarball. The tree
// itself is left exactly as it was (CI leaves the clone clean).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without types
import { publicPackages } from './packing.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const gitStatus = (): string =>
  spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: root, encoding: 'utf8' })
    .stdout;

describe('release dry run', () => {
  it('changeset version and npm publish --dry-run of every public package pass, and the tree is untouched', () => {
    const statusBefore = gitStatus();
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('npm_config_')) delete env[k];
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'release-check.mjs')], {
      cwd: root,
      env,
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as {
      ok: boolean;
      published: string[];
      versions: Record<string, string>;
    };
    expect(summary.ok).toBe(true);
    const names = (publicPackages(root) as { name: string }[]).map((p) => p.name);
    expect(names.length).toBeGreaterThanOrEqual(10);
    expect(summary.published.map((s) => s.replace(/@[^@]+$/, '')).sort()).toEqual([...names].sort());
    expect(gitStatus()).toBe(statusBefore);
  }, 300_000);
});
