import { readFileSync } from 'node:fs';
import { RuntimeError } from '../errors.js';

/** The account a native instance runs as. */
export interface NativeRunUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * Resolves a user name (or a numeric uid) from `/etc/passwd` (`passwdPath`). Refuses (`admission`,
 * field `runAsUser`) an unknown user and uid 0 (running as root is what `runAsUser` exists to avoid).
 */
export function resolveRunUser(user: string, passwdPath = '/etc/passwd'): NativeRunUser {
  let text = '';
  try {
    text = readFileSync(passwdPath, 'utf8');
  } catch {
    // No passwd file: only a numeric uid can be used.
  }
  for (const line of text.split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === undefined || uid === undefined || gid === undefined) continue;
    if (name === user || uid === user) {
      const u = { name, uid: Number(uid), gid: Number(gid) };
      if (!Number.isSafeInteger(u.uid) || !Number.isSafeInteger(u.gid)) continue;
      return checked(u);
    }
  }
  if (/^[0-9]{1,10}$/.test(user)) return checked({ name: user, uid: Number(user), gid: Number(user) });
  throw new RuntimeError('admission', `runAsUser: no such user ${JSON.stringify(user)}`, {
    field: 'runAsUser',
  });
}

function checked(u: NativeRunUser): NativeRunUser {
  if (u.uid === 0) {
    throw new RuntimeError('admission', `runAsUser: ${u.name} is root; name an unprivileged user`, {
      field: 'runAsUser',
    });
  }
  return u;
}

/** True when this process runs as root (uid 0). */
export function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}
