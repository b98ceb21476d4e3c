import { lstatSync } from 'node:fs';
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
  const seen = new Set<string>();
  for (const p of paths) {
    const k = p.toLowerCase();
    if (seen.has(k)) return p;
    seen.add(k);
  }
  return undefined;
}

/** What {@link inspectPackagePath} found on disk. */
export type PathState =
  | { readonly state: 'file'; readonly size: number }
  | { readonly state: 'missing' }
  | {
      readonly state: 'not-regular';
      readonly why: string;
    };

/**
 * Looks at `root/path` without following symbolic links: every directory on the way must be a real
 * directory and the last segment a regular file, so nothing outside `root` is ever reached. `path`
 * must already satisfy {@link packagePathProblem}.
 */
export function inspectPackagePath(root: string, path: string): PathState {
  const segments = path.split('/');
  let current = root;
  for (let i = 0; i < segments.length; i++) {
    current = join(current, segments[i] as string);
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(current);
    } catch {
      return { state: 'missing' };
    }
    const last = i === segments.length - 1;
    if (st.isSymbolicLink())
      return { state: 'not-regular', why: `${segments.slice(0, i + 1).join('/')} is a symbolic link` };
    if (!last && !st.isDirectory())
      return { state: 'not-regular', why: `${segments.slice(0, i + 1).join('/')} is not a directory` };
    if (last && !st.isFile()) return { state: 'not-regular', why: `${path} is not a regular file` };
    if (last) return { state: 'file', size: st.size };
  }
  return { state: 'missing' };
}
