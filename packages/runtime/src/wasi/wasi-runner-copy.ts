import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** The files an unprivileged runner reads: the runner script and the WASI preview1 module it imports. */
const RUNNER_FILES: readonly string[] = ['wasi-runner.mjs', 'wasi-preview1.mjs'];

const copies = new Map<string, string>();

/**
 * The path an unprivileged WASI run should execute instead of `runnerPath`: a copy of the runner files
 * in a directory of its own under the system's temporary directory (created once per process, mode
 * 0755, files 0444, owned by the host's user and removed when the process exits).
 *
 * A root host runs guests as `run_as_user` (`nobody` by default), and that account must be able to read
 * the runner script. The installed package may well sit under a directory it cannot enter (a clone in
 * `/root`, a `mktemp -d` checkout, a 0700 prefix): without the copy the runner cannot start, the WASI
 * probe fails and the route silently offers nothing. The copy is read-only to everyone but the host's
 * user, and the sticky temporary directory keeps others from replacing it.
 */
export function readableRunnerPath(runnerPath: string): string {
  const held = copies.get(runnerPath);
  if (held !== undefined && existsSync(held)) return held;
  const dir = mkdtempSync(join(tmpdir(), 'heddle-wasi-runner-'));
  for (const f of RUNNER_FILES) {
    const to = join(dir, f);
    copyFileSync(join(dirname(runnerPath), f), to);
    chmodSync(to, 0o444);
  }
  chmodSync(dir, 0o755);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const copy = join(dir, basename(runnerPath));
  copies.set(runnerPath, copy);
  return copy;
}
