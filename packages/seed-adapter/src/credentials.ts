import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { readTextBounded, writeFileAtomic } from '@heddle/envelope';
import { SeedError } from './errors.js';

/** A bearer token as the client accepts it (RFC 6750 `b64token`, 8 to 1024 characters). */
export const SEED_TOKEN_RE: RegExp = /^(?=.{8,1024}$)[A-Za-z0-9._~+/-]+=*$/;

/** The most a token file may hold (bytes); a bigger file is not a token file. */
const MAX_TOKEN_FILE = 4096;

/** Whether `token` is a well-formed bearer token (safe in an `Authorization` header). */
export function isValidToken(token: unknown): token is string {
  return typeof token === 'string' && SEED_TOKEN_RE.test(token);
}

/**
 * Replaces every occurrence of `token` in `text` with `[redacted]`. Every message that could carry
 * Seed-provided or request text goes through this before it leaves the client.
 */
export function redact(text: string, token: string | undefined): string {
  if (token === undefined || token.length === 0) return text;
  return text.split(token).join('[redacted]');
}

/**
 * Saves a bearer token to `path` atomically, owner-only (0600); the directory is created (0700) when
 * missing. Throws `SeedError('credentials')` for a malformed token or a write that fails (the message
 * never contains the token).
 */
export function saveToken(path: string, token: string): void {
  if (!isValidToken(token)) {
    throw new SeedError('credentials', 'refusing to save a malformed token', { field: 'token' });
  }
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileAtomic(path, `${token}\n`, { mode: 0o600 });
  } catch (err) {
    throw new SeedError('credentials', `cannot write token file ${path}: ${reason(err)}`, { field: 'path' });
  }
}

/**
 * Loads a bearer token from `path`. Refuses (`SeedError('credentials')`) a missing or unreadable file,
 * one that is not a regular file, one that group or others may read or write (like ssh does; fix with
 * `chmod 600`), an empty file or one that does not hold a well-formed token.
 */
export function loadToken(path: string): string {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    throw new SeedError('credentials', `token file ${path} is missing or unreadable: ${reason(err)}`, {
      field: 'path',
    });
  }
  if (!st.isFile()) throw new SeedError('credentials', `token file ${path} is not a regular file`);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
    throw new SeedError(
      'credentials',
      `token file ${path} is accessible by group or others (mode ${mode}); run chmod 600 ${path}`,
      { field: 'path' },
    );
  }
  if (st.size > MAX_TOKEN_FILE) {
    throw new SeedError('credentials', `token file ${path} is larger than ${MAX_TOKEN_FILE} bytes`);
  }
  let text: string;
  try {
    text = readTextBounded(path, MAX_TOKEN_FILE);
  } catch (err) {
    throw new SeedError('credentials', `cannot read token file ${path}: ${reason(err)}`, { field: 'path' });
  }
  const token = text.trim();
  if (token.length === 0) throw new SeedError('credentials', `token file ${path} is empty`);
  if (!isValidToken(token)) {
    throw new SeedError('credentials', `token file ${path} does not hold a well-formed token`);
  }
  return token;
}

/** Removes the token file at `path`; returns whether there was one. */
export function removeToken(path: string): boolean {
  let existed = true;
  try {
    statSync(path);
  } catch {
    existed = false;
  }
  try {
    rmSync(path, { force: true });
  } catch (err) {
    throw new SeedError('credentials', `cannot remove token file ${path}: ${reason(err)}`, { field: 'path' });
  }
  return existed;
}

function reason(err: unknown): string {
  // cast: fs errors carry an errno code
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'error';
}
