import { resolve } from 'node:path';
import { errorMessage } from '@heddle/cli-kit';
import { type KeyPair, loadKeyFile, readTextBounded } from '@heddle/envelope';
import { ApiClient, normaliseFingerprint } from '@heddle/operator-api';
import { badInput } from './cli-error.js';
import { ADDR_ENV, CONTEXT_ENV, type ContextEntry, contextsPath, readContexts } from './contexts.js';
import { HOME_ENV, homeDir } from './home.js';
import type { CliIo } from './io.js';

/** Environment variables of a client without a context: the key file, the token file, the pinned fingerprint. */
export const KEY_FILE_ENV = 'HEDDLE_KEY_FILE';
/** The token file of a client without a context. */
export const TOKEN_FILE_ENV = 'HEDDLE_TOKEN_FILE';
/** The pinned fingerprint of a client without a context. */
export const FINGERPRINT_ENV = 'HEDDLE_FINGERPRINT';

type Env = Readonly<Record<string, string | undefined>>;
const set = (v: string | undefined): v is string => v !== undefined && v !== '';

/**
 * The API client an operator command uses (docs/cli-reference.md, "Which controller"), first match
 * wins:
 * 1. `--home <dir>`: the daemon running in that home (its `api.json` and `api.token`);
 * 2. `$HEDDLE_ADDR`: that URL, with the credential of `$HEDDLE_CONTEXT` or the current context, else
 *    `$HEDDLE_KEY_FILE` or `$HEDDLE_TOKEN_FILE` (and `$HEDDLE_FINGERPRINT`), else the home's api.token;
 * 3. `$HEDDLE_CONTEXT`: that context;
 * 4. `$HEDDLE_HOME`: the daemon running in that home;
 * 5. the current context (`heddle context use`);
 * 6. the daemon running in `~/.heddle`.
 */
export function connect(flagHome: string | undefined, io: Pick<CliIo, 'cwd'>, env: Env): ApiClient {
  if (set(flagHome)) return ApiClient.fromHome(homeDir(flagHome, io, env));
  const addr = env[ADDR_ENV];
  const named = env[CONTEXT_ENV];
  if (!set(addr) && !set(named) && set(env[HOME_ENV])) return ApiClient.fromHome(homeDir(undefined, io, env));
  const path = contextsPath(env);
  const file = readContexts(path);
  let entry: ContextEntry | undefined;
  if (set(named)) {
    entry = file.contexts.find((c) => c.name === named);
    if (entry === undefined) {
      throw badInput(
        'unknown_context',
        `$${CONTEXT_ENV}: no context ${named} in ${path} (see heddle context ls)`,
        CONTEXT_ENV,
      );
    }
  } else if (!set(env[HOME_ENV]) && file.current !== null) {
    entry = file.contexts.find((c) => c.name === file.current);
  }
  if (set(addr)) {
    const url = addr.replace(/\/+$/, '');
    if (!/^https?:\/\/[^/\s?#]{1,300}$/.test(url))
      throw badInput(
        'invalid_input',
        `$${ADDR_ENV}: expected http(s)://<host>:<port>, got ${JSON.stringify(addr)}`,
        ADDR_ENV,
      );
    if (entry !== undefined) return clientOf({ ...entry, url }, io);
    const fp = env[FINGERPRINT_ENV];
    const fingerprint = set(fp) ? normaliseFingerprint(fp) : undefined;
    if (set(fp) && fingerprint === undefined)
      throw badInput('invalid_input', `$${FINGERPRINT_ENV}: expected sha256:<64 hex>`, FINGERPRINT_ENV);
    const keyFile = env[KEY_FILE_ENV];
    const tokenFile = env[TOKEN_FILE_ENV];
    if (!set(keyFile) && !set(tokenFile)) {
      const home = homeDir(undefined, io, env);
      const token = readToken(resolve(home, 'api.token'), 'api.token');
      return new ApiClient({ url, token, ...(fingerprint === undefined ? {} : { fingerprint }) });
    }
    return clientOf(
      {
        name: ADDR_ENV,
        url,
        ...(fingerprint === undefined ? {} : { fingerprint }),
        ...(set(keyFile) ? { key_file: keyFile } : { token_file: tokenFile }),
      },
      io,
    );
  }
  if (entry !== undefined) return clientOf(entry, io);
  return ApiClient.fromHome(homeDir(undefined, io, env));
}

/** The client of a context: its URL, pinned fingerprint, and key or token. */
export function clientOf(c: ContextEntry, io: Pick<CliIo, 'cwd'>): ApiClient {
  const fp = c.fingerprint === undefined ? {} : { fingerprint: c.fingerprint };
  if (c.key_file !== undefined) {
    const path = resolve(io.cwd, c.key_file);
    let keys: KeyPair;
    try {
      keys = loadKeyFile(path);
    } catch (err) {
      throw badInput(
        'key_invalid',
        `context ${c.name}: key_file ${path}: ${errorMessage(err)}`,
        'key_file',
        err,
      );
    }
    return new ApiClient({ url: c.url, keys, ...fp });
  }
  const token = readToken(resolve(io.cwd, c.token_file ?? ''), `context ${c.name}: token_file`);
  return new ApiClient({ url: c.url, token, ...fp });
}

function readToken(path: string, what: string): string {
  try {
    const token = readTextBounded(path, 4096).trim();
    if (!/^[\x21-\x7e]{1,512}$/.test(token))
      throw new Error('expected one token of 1..512 printable characters');
    return token;
  } catch (err) {
    throw badInput('token_invalid', `${what} ${path}: ${errorMessage(err)}`, 'token_file', err);
  }
}
