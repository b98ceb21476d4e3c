import type { ChildProcess } from 'node:child_process';

/** The `code` of a system call's error (`ESRCH`, `EPERM`, ...), or undefined. */
function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Sends `signal` to the whole process group led by `pid` (the child must have been spawned with
 * `detached: true`, which makes it the leader of a new session and group). Returns false when no
 * process of the group exists any more. Never signals a pid of 1 or less (that would hit the caller's
 * own group or every process).
 */
export function killProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 1) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch (err) {
    if (errnoOf(err) === 'ESRCH') return false;
    throw err;
  }
}

/** True while any process of the group led by `pid` exists (a zombie not yet reaped by its parent counts). */
export function processGroupAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 1) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return errnoOf(err) === 'EPERM';
  }
}

/** What {@link terminateProcessGroup} did. */
export interface TerminateResult {
  /** True when SIGKILL had to be sent because the grace period ran out. */
  readonly killed: boolean;
  /** Milliseconds from SIGTERM until the leader had exited. */
  readonly elapsedMs: number;
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Stops a process group: SIGTERM to the group, wait up to `graceMs` for the leader to exit (`exited`
 * resolves when it has), then SIGKILL to the group. Whatever the leader did, the group gets a final
 * SIGKILL so no grandchild survives its parent (a grandchild that ignored SIGTERM, or one that was left
 * behind by a leader that exited). `killed` says whether the leader needed the SIGKILL.
 */
export async function terminateProcessGroup(
  pid: number,
  exited: Promise<unknown>,
  graceMs: number,
): Promise<TerminateResult> {
  const t0 = performance.now();
  let done = false;
  const leaderGone = exited.then(() => {
    done = true;
  });
  killProcessGroup(pid, 'SIGTERM');
  await Promise.race([leaderGone, delay(Math.max(0, graceMs))]);
  const killed = !done;
  killProcessGroup(pid, 'SIGKILL');
  await leaderGone;
  return { killed, elapsedMs: performance.now() - t0 };
}

/** A promise that resolves when `child` has exited (immediately if it already has). */
export function childExited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
}
