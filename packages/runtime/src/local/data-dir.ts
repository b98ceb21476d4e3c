import { lchownSync, lstatSync, mkdirSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { RuntimeError } from '../errors.js';

const field = 'host.dataDir';

/** The realpath of `path`'s nearest existing ancestor (itself when it exists), with the rest appended. */
function resolvedThroughAncestor(path: string): string {
  const rest: string[] = [];
  let cur = resolve(path);
  for (;;) {
    try {
      return join(realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = dirname(cur);
      if (parent === cur) return join(cur, ...rest.reverse());
      rest.push(cur.slice(parent.length).replace(/^\/+/, ''));
      cur = parent;
    }
  }
}

/**
 * Refuses (`invalid_config`, field `host.dataDir`) a data directory that is not absolute, holds `:` or
 * `,` (a container mount spec splits on them), is a symbolic link, or does not resolve (the realpath of
 * its nearest existing ancestor) strictly under `dataRoot` (itself resolved). Without a `dataRoot`
 * (the WASI and container adapters' option is optional) every check but the last applies.
 */
export function checkDataDirUnder(dataDir: string, dataRoot: string | undefined): void {
  const refuse = (why: string): never => {
    throw new RuntimeError('invalid_config', `host.dataDir: ${why}`, { field });
  };
  if (!isAbsolute(dataDir)) refuse('expected an absolute path');
  if (dataDir.includes(':') || dataDir.includes(',')) refuse('must not contain ":" or ","');
  if (dataDir.includes('\0')) refuse('must not contain NUL');
  try {
    if (lstatSync(dataDir).isSymbolicLink()) refuse(`${dataDir} is a symbolic link`);
  } catch (err) {
    if (err instanceof RuntimeError) throw err;
  }
  if (dataRoot === undefined) return;
  const root = resolvedThroughAncestor(dataRoot);
  const rel = relative(root, resolvedThroughAncestor(dataDir));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    refuse(`${dataDir} is not under the data root ${dataRoot}`);
  }
}

/**
 * Creates the data directory (mode 0700; missing parents 0711) without following symbolic links, and
 * hands it to `owner` with lchown when given. Used at load and again before a run when it went
 * missing. Refuses (`runtime`) a path that exists as a symbolic link or not as a directory.
 */
export function ensureDataDir(dataDir: string, owner?: { readonly uid: number; readonly gid: number }): void {
  try {
    // Missing parents 0711 (searchable, not listable), so the user runs are made as can reach its own
    // directory; the data directory itself 0700.
    mkdirSync(dirname(resolve(dataDir)), { recursive: true, mode: 0o711 });
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dataDir);
    if (st.isSymbolicLink() || !st.isDirectory()) {
      throw new RuntimeError('runtime', `host.dataDir: ${dataDir} is not a plain directory`, { field });
    }
    if (owner !== undefined) lchownSync(dataDir, owner.uid, owner.gid);
  } catch (err) {
    if (err instanceof RuntimeError) throw err;
    throw new RuntimeError('runtime', `host.dataDir: cannot create ${dataDir}`, { field, cause: err });
  }
}

/**
 * Refuses (`runtime`, field `host.dataDir`) a data directory that is a symbolic link or holds one
 * anywhere below it: the WASI runtime follows symlinks, so one would lead a guest outside its
 * directory. Checked before every WASI run.
 */
export function assertNoSymlinks(dir: string): void {
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      const st = lstatSync(path);
      if (st.isSymbolicLink()) {
        throw new RuntimeError('runtime', `host.dataDir: holds a symbolic link (${path}); refusing to run`, {
          field,
        });
      }
      if (st.isDirectory()) walk(path);
    }
  };
  if (lstatSync(dir).isSymbolicLink()) {
    throw new RuntimeError('runtime', `host.dataDir: ${dir} is a symbolic link; refusing to run`, { field });
  }
  walk(dir);
}

/**
 * Refuses (`runtime`, field `host.dataDir`) a data directory that `user` cannot reach: every ancestor
 * must be searchable by it (the owner, group or other x bit, whichever class applies to it;
 * supplementary groups are dropped at spawn, so only the primary gid counts).
 */
export function assertReachableBy(
  dataDir: string,
  user: { readonly uid: number; readonly gid: number },
): void {
  let dir = dirname(resolve(dataDir));
  for (;;) {
    const st = lstatSync(dir);
    const mode = st.mode;
    let bit = 0o001;
    if (st.uid === user.uid) bit = 0o100;
    else if (st.gid === user.gid) bit = 0o010;
    const ok = (mode & bit) !== 0;
    if (!ok) {
      throw new RuntimeError(
        'runtime',
        `host.dataDir: ${dir} is not searchable by uid ${user.uid}, the user runs are made as`,
        { field },
      );
    }
    const up = dirname(dir);
    if (up === dir) return;
    dir = up;
  }
}
