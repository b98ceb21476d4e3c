import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { errnoCode, writeFileAtomic } from '@heddle/envelope';
import { ChainError } from './errors.js';

/**
 * A lock file that was just created may be empty for an instant; an empty or garbled lock file older
 * than this is left over from a crash between its creation and its write, and is stale.
 */
const UNREADABLE_LOCK_GRACE_MS = 2_000;

/**
 * Who holds a lock: the pid, and (on Linux) the process's start time in clock ticks since boot
 * (`/proc/<pid>/stat` field 22) and the kernel's boot id. A pid alone cannot identify a writer after a
 * crash: the pid is reused, and in a container the restarted daemon is always PID 1 again.
 */
export interface LockHolder {
  /** The holder's process id. */
  readonly pid: number;
  /** Its start time in clock ticks since boot, when the platform tells it. */
  readonly start: string | undefined;
  /** The boot id of the machine it ran on, when the platform tells it. */
  readonly boot: string | undefined;
}

function readSmallText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').slice(0, 4096);
  } catch {
    return undefined;
  }
}

/** The start time (field 22 of `/proc/<pid>/stat`) of a process, or undefined when unknown. */
export function processStartTime(pid: number): string | undefined {
  const stat = readSmallText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may contain spaces or ')': split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19]; // field 22 overall: the 20th after the name
  return start !== undefined && /^\d{1,20}$/.test(start) ? start : undefined;
}

/** This machine's boot id (Linux), or undefined. */
function bootId(): string | undefined {
  const id = readSmallText('/proc/sys/kernel/random/boot_id')?.trim();
  return id !== undefined && /^[0-9a-f-]{36}$/.test(id) ? id : undefined;
}

/** This process as a lock holder. */
export function currentHolder(): LockHolder {
  return { pid: process.pid, start: processStartTime(process.pid), boot: bootId() };
}

function holderText(h: LockHolder): string {
  return `${h.pid}\n${h.start === undefined ? '' : `start ${h.start}\n`}${h.boot === undefined ? '' : `boot ${h.boot}\n`}`;
}

/**
 * Parses a lock file: `<pid>\n`, optionally followed by `start <ticks>\n` and `boot <id>\n` (older
 * versions wrote the pid line only). Null when it holds no valid holder (yet).
 */
export function parseLockHolder(text: string): LockHolder | null {
  const m = /^(\d{1,10})\n(?:start (\d{1,20})\n)?(?:boot ([0-9a-f-]{36})\n)?$/.exec(text);
  if (m === null) {
    const legacy = /^(\d{1,10})$/.exec(text);
    return legacy === null ? null : { pid: Number(legacy[1]), start: undefined, boot: undefined };
  }
  return { pid: Number(m[1]), start: m[2], boot: m[3] };
}

/** True when a process with this pid exists (EPERM: it exists but belongs to someone else). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === 'EPERM';
  }
}

/**
 * True when the holder a lock names is still running: its pid is alive, and, where the platform
 * tells start times, the process with that pid started at the recorded time on this boot. A lock
 * written without a start time (an older version) that names this very process is not ours (this
 * process always records one where it can), so it is stale too.
 */
export function holderAlive(h: LockHolder, self: LockHolder = currentHolder()): boolean {
  if (h.boot !== undefined && self.boot !== undefined && h.boot !== self.boot) return false;
  if (!pidAlive(h.pid)) return false;
  if (h.start === undefined) return !(h.pid === self.pid && self.start !== undefined);
  const now = processStartTime(h.pid);
  return now === undefined || now === h.start;
}

/** The holder a lock file names, or null when it names none (yet) or cannot be read. */
function lockHolder(lockPath: string): LockHolder | null {
  const text = readSmallText(lockPath);
  return text === undefined ? null : parseLockHolder(text);
}

function tryCreate(lockPath: string, self: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, 'wx', 0o600);
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, holderText(self));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** A takeover guard older than this was left by a process that crashed while taking over a lock. */
const TAKEOVER_GUARD_STALE_MS = 10_000;

/** Test hooks and identity of {@link acquireChainLock} (internal). */
export interface AcquireLockOptions {
  /** Who takes the lock (default this process). */
  readonly self?: LockHolder;
  /** Called once a lock was judged stale, before it is taken over (tests make another taker run here). */
  readonly onStale?: () => void;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes the stale lock at `lockPath`, whose text was `staleText`, only if it still holds that text,
 * under the takeover guard `<lock>.takeover` (a directory, created atomically): two processes that
 * judged the same lock stale cannot both remove it, so the second never removes the lock the first
 * just created. Returns false when another process is taking it over (try again shortly).
 */
function takeOverStale(lockPath: string, staleText: string): boolean {
  const guard = `${lockPath}.takeover`;
  try {
    mkdirSync(guard, { mode: 0o700 });
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
    try {
      if (Date.now() - statSync(guard).mtimeMs > TAKEOVER_GUARD_STALE_MS) rmdirSync(guard);
    } catch {
      // removed meanwhile
    }
    return false;
  }
  try {
    if (readSmallText(lockPath) === staleText) rmSync(lockPath, { force: true });
  } finally {
    rmdirSync(guard);
  }
  return true;
}

/**
 * Takes the single-writer lock of a chain file: `<file>.lock`, created with O_EXCL and naming its
 * holder (pid, start time, boot id: {@link LockHolder}). When the holder it names is still running
 * (this process included), throws `chain_locked`. When it is not (a writer that crashed, even if its
 * pid now belongs to another process, such as PID 1 after a container restart), the stale lock is
 * taken over: removed under a takeover guard only while it is still the stale one, then created again
 * with O_EXCL. Returns the lock path.
 */
export function acquireChainLock(path: string, options: AcquireLockOptions = {}): string {
  const lockPath = `${path}.lock`;
  const self = options.self ?? currentHolder();
  for (let attempt = 0; attempt < 100; attempt++) {
    if (tryCreate(lockPath, self)) return lockPath;
    const text = readSmallText(lockPath);
    if (text === undefined) continue; // removed meanwhile: try again
    const holder = parseLockHolder(text);
    if (holder === null) {
      let age = Number.POSITIVE_INFINITY;
      try {
        age = Date.now() - statSync(lockPath).mtimeMs;
      } catch {
        continue; // removed meanwhile: try again
      }
      if (age < UNREADABLE_LOCK_GRACE_MS) {
        throw new ChainError('chain_locked', `${path} is being opened for writing by another process`);
      }
    } else if (holderAlive(holder, self)) {
      const pid = holder.pid;
      throw new ChainError(
        'chain_locked',
        `${path} is open for writing by process ${pid}${pid === process.pid ? ' (this process)' : ''} (lock ${lockPath})`,
      );
    }
    // Stale: its writer is gone (or its pid now names another process).
    options.onStale?.();
    if (!takeOverStale(lockPath, text)) sleepSync(10);
  }
  throw new ChainError('chain_locked', `${path}: could not take the lock ${lockPath}`);
}

/** Removes the lock, if it is still this process's. */
export function releaseChainLock(lockPath: string): void {
  const holder = lockHolder(lockPath);
  const self = currentHolder();
  if (holder !== null && holder.pid === self.pid && holder.start === self.start) {
    rmSync(lockPath, { force: true });
  }
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
