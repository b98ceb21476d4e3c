import { type BigIntStats, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { ENVELOPE_FILE } from './limits.js';

/** Longest accepted package path, in characters. */
export const MAX_PATH_LENGTH = 255;

const SEGMENT_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/**
 * Why `path` is not an acceptable package file path, or `undefined` when it is. A package path is
 * relative, uses `/` as separator, and every segment matches `[A-Za-z0-9_][A-Za-z0-9._-]*` (so `..`,
 * `.`, empty segments, absolute paths, drive letters, backslashes, NUL and hidden files are all
 * impossible). The envelope's own name is reserved.
 */
export function packagePathProblem(path: string): string | undefined {
  if (typeof path !== 'string' || path.length === 0) return 'must be a non-empty string';
  if (path.length > MAX_PATH_LENGTH) return `longer than ${MAX_PATH_LENGTH} characters`;
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'absolute paths are refused';
  if (path.includes('\\')) return 'backslashes are refused (use /)';
  const segments = path.split('/');
  for (const s of segments) {
    if (s === '..' || s === '.') return 'path traversal (. or .. segment) is refused';
    if (s === '') return 'empty path segment';
    if (!SEGMENT_RE.test(s))
      return `segment ${JSON.stringify(s)} has characters outside [A-Za-z0-9._-] or starts with .`;
  }
  if (path === ENVELOPE_FILE) return `${ENVELOPE_FILE} is reserved for the envelope`;
  return undefined;
}

/** True when `path` is an acceptable package file path (see {@link packagePathProblem}). */
export function isPackagePath(path: string): boolean {
  return packagePathProblem(path) === undefined;
}

/**
 * The first path of `paths` that duplicates an earlier one, compared case-insensitively (two paths that
 * differ only in case are the same file on macOS and Windows), or `undefined`.
 */
export function firstDuplicatePath(paths: readonly string[]): string | undefined {
  const i = firstDuplicateIndex(paths);
  return i === undefined ? undefined : paths[i];
}

/** The index of the path {@link firstDuplicatePath} returns, or `undefined`. */
export function firstDuplicateIndex(paths: readonly string[]): number | undefined {
  const seen = new Set<string>();
  for (let i = 0; i < paths.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const k = (paths[i] as string).toLowerCase();
    if (seen.has(k)) return i;
    seen.add(k);
  }
  return undefined;
}

/**
 * The first problem of a list of package paths: a path refused by {@link packagePathProblem}, else a
 * duplicate ({@link firstDuplicatePath}), with its index; `undefined` when every path is acceptable.
 */
export function pathListProblem(paths: readonly string[]): { index: number; message: string } | undefined {
  for (let i = 0; i < paths.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    const problem = packagePathProblem(paths[i] as string);
    if (problem !== undefined) return { index: i, message: problem };
  }
  const dup = firstDuplicateIndex(paths);
  if (dup === undefined) return undefined;
  return { index: dup, message: `duplicate path ${JSON.stringify(paths[dup])}` };
}

/** What {@link inspectPackagePath} found on disk. */
export type PathState =
  | {
      readonly state: 'file';
      readonly size: number;
      /** Device and inode of the file found, to check that a later open reaches the same file. */
      readonly dev: bigint;
      readonly ino: bigint;
    }
  | { readonly state: 'missing' }
  | {
      readonly state: 'not-regular';
      readonly why: string;
    };

/**
 * Looks at `root/path` without following symbolic links: every directory on the way must be a real
 * directory and the last segment a regular file. `path` must already satisfy
 * {@link packagePathProblem}. The answer is only true at the moment of the check: a reader must open
 * the file without following links and compare it with `dev`/`ino` (see `openPackageFile`).
 */
export function inspectPackagePath(root: string, path: string): PathState {
  const segments = path.split('/');
  let current = root;
  for (let i = 0; i < segments.length; i++) {
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    current = join(current, segments[i] as string);
    let st: BigIntStats;
    try {
      st = lstatSync(current, { bigint: true });
    } catch {
      return { state: 'missing' };
    }
    const last = i === segments.length - 1;
    if (st.isSymbolicLink())
      return { state: 'not-regular', why: `${segments.slice(0, i + 1).join('/')} is a symbolic link` };
    if (!last && !st.isDirectory())
      return { state: 'not-regular', why: `${segments.slice(0, i + 1).join('/')} is not a directory` };
    if (last && !st.isFile()) return { state: 'not-regular', why: `${path} is not a regular file` };
    if (last) return { state: 'file', size: Number(st.size), dev: st.dev, ino: st.ino };
  }
  return { state: 'missing' };
}
