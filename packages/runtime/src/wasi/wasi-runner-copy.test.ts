import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WASI_RUNNER_PATH } from './wasi-process.js';
import { readableRunnerPath } from './wasi-runner-copy.js';

const root = process.getuid?.() === 0;
const work = mkdtempSync(join(tmpdir(), 'heddle-runner-copy-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The runner files installed under a directory only root may enter (like a clone in /root). */
function closedInstall(): string {
  const pkg = join(work, 'closed', 'pkg');
  mkdirSync(pkg, { recursive: true });
  for (const f of ['wasi-runner.mjs', 'wasi-preview1.mjs']) {
    cpSync(join(dirname(WASI_RUNNER_PATH), f), join(pkg, f));
  }
  chmodSync(join(work, 'closed'), 0o700);
  return join(pkg, 'wasi-runner.mjs');
}

/** Whether `nobody` can read `path` (exit 0 of a child running as uid/gid 65534). */
function nobodyReads(path: string): boolean {
  const r = spawnSync(process.execPath, ['-e', 'require("node:fs").readFileSync(process.argv[1])', path], {
    uid: 65534,
    gid: 65534,
    cwd: '/',
  });
  return r.status === 0;
}

describe('readableRunnerPath', () => {
  it('copies the runner and its preview1 module, read-only, once per runner', () => {
    const original = closedInstall();
    const copy = readableRunnerPath(original);
    expect(copy).not.toBe(original);
    expect(readFileSync(copy, 'utf8')).toBe(readFileSync(original, 'utf8'));
    const preview1 = join(dirname(copy), 'wasi-preview1.mjs');
    expect(readFileSync(preview1, 'utf8')).toBe(
      readFileSync(join(dirname(original), 'wasi-preview1.mjs'), 'utf8'),
    );
    expect(statSync(copy).mode & 0o777).toBe(0o444);
    expect(statSync(dirname(copy)).mode & 0o777).toBe(0o755);
    expect(readableRunnerPath(original)).toBe(copy);
  });

  it.skipIf(!root)('lets an unprivileged runner read a package installed where it cannot enter', () => {
    const original = closedInstall();
    expect(nobodyReads(original)).toBe(false);
    const copy = readableRunnerPath(original);
    expect(nobodyReads(copy)).toBe(true);
    expect(nobodyReads(join(dirname(copy), 'wasi-preview1.mjs'))).toBe(true);
  });
});
