import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { writeFileAtomic } from '@heddle/envelope';
import { ChainError } from './errors.js';

/**
 * A lock file with a pid that was just created may be empty for an instant; an empty or garbled lock
 * file older than this is left over from a crash between its creation and its write, and is stale.
 */
const UNREADABLE_LOCK_GRACE_MS = 2_000;

/** True when a process with this pid exists (EPERM: it exists but belongs to someone else). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid recorded in a lock file, or null when it holds none (yet). */
function lockPid(lockPath: string): number | null {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch {
    return null;
  }
  const m = /^(\d{1,10})\n?$/.exec(text);
  return m === null ? null : Number(m[1]);
}

function tryCreate(lockPath: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Takes the single-writer lock of a chain file: `<file>.lock`, created with O_EXCL and holding the
 * writer's pid. When it exists and its pid is alive (this process included), throws `chain_locked`.
 * When its pid is dead (a writer that crashed), the stale lock is taken over. Returns the lock path.
 */
export function acquireChainLock(path: string): string {
  const lockPath = `${path}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(lockPath)) return lockPath;
    const pid = lockPid(lockPath);
    if (pid === null) {
      let age = Number.POSITIVE_INFINITY;
      try {
        age = Date.now() - statSync(lockPath).mtimeMs;
      } catch {
        continue; // removed meanwhile: try again
      }
      if (age < UNREADABLE_LOCK_GRACE_MS) {
        throw new ChainError('chain_locked', `${path} is being opened for writing by another process`);
      }
    } else if (pidAlive(pid)) {
      throw new ChainError(
        'chain_locked',
        `${path} is open for writing by process ${pid}${pid === process.pid ? ' (this process)' : ''} (lock ${lockPath})`,
      );
    }
    rmSync(lockPath, { force: true }); // stale: its writer is gone
  }
  throw new ChainError('chain_locked', `${path}: could not take the lock ${lockPath}`);
}

/** Removes the lock, if it is still this process's. */
export function releaseChainLock(lockPath: string): void {
  if (lockPid(lockPath) === process.pid) rmSync(lockPath, { force: true });
}

/**
 * Saves the bytes a torn-tail repair is about to remove to `<file>.torn-<offset>` (mode 0600, written
 * atomically and fsynced), never overwriting an earlier one (then `.torn-<offset>.1`, `.2`, ...).
 * Returns the path.
 */
export function saveTornBytes(path: string, offset: number, bytes: Uint8Array): string {
  let target = `${path}.torn-${offset}`;
  for (let n = 1; existsSync(target); n++) target = `${path}.torn-${offset}.${n}`;
  writeFileAtomic(target, bytes, { mode: 0o600 });
  return target;
}
