import { readFileSync } from 'node:fs';
import { errorMessage, systemCliError } from '@heddle/cli-kit';
import { StateError, type StateStore } from '@heddle/control-plane';
import { type PgConnectionConfig, PostgresStateStore } from '@heddle/control-plane/postgres';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { badInput, CliError, ExitCode } from './cli-error.js';
import type { StateChoice } from './controller-config.js';
import type { SealMeta } from './state-seal.js';

/** A state store the controller runs on: the plane's interface plus the seal's meta values. */
export type ControllerStore = StateStore & SealMeta;

/** The PostgreSQL choice of `state` in controller.json. */
export type PostgresChoice = Extract<StateChoice, { kind: 'postgres' }>;

/**
 * The connection a `postgres` state choice names: its URL or parts, with the password read from
 * `password_file` (its first line). An unreadable or empty password file is `CliError`
 * `config_invalid` naming `state.password_file`.
 */
export function postgresConnection(choice: PostgresChoice): PgConnectionConfig {
  let password: string | undefined;
  if (choice.passwordFile !== undefined) {
    try {
      password = readFileSync(choice.passwordFile, 'utf8').split('\n')[0]?.trimEnd();
    } catch (err) {
      throw badInput(
        'config_invalid',
        `state.password_file: cannot read ${choice.passwordFile}: ${errorMessage(err)}`,
        'state.password_file',
        err,
      );
    }
    if (password === undefined || password === '') {
      throw badInput(
        'config_invalid',
        `state.password_file: ${choice.passwordFile} is empty`,
        'state.password_file',
      );
    }
  }
  return {
    ...(choice.url === undefined ? {} : { connectionString: choice.url }),
    ...(choice.host === undefined ? {} : { host: choice.host }),
    ...(choice.url === undefined ? { port: choice.port ?? 5432 } : {}),
    ...(choice.database === undefined ? {} : { database: choice.database }),
    ...(choice.user === undefined ? {} : { user: choice.user }),
    ...(password === undefined ? {} : { password }),
  };
}

/** Opens a PostgreSQL state choice (see {@link openControllerStore} for the refusals). */
export function openPostgresStore(choice: PostgresChoice): PostgresStateStore {
  const connection = postgresConnection(choice);
  try {
    return PostgresStateStore.open(connection, {
      ...(choice.callTimeoutMs === undefined ? {} : { callTimeoutMs: choice.callTimeoutMs }),
      ...(choice.maxRetries === undefined ? {} : { maxRetries: choice.maxRetries }),
    });
  } catch (err) {
    throw stateOpenError(err, 'state');
  }
}

/**
 * The code of a `StateError` (by its code, not its class: the store may come from another copy of
 * the package than this file's import), or undefined.
 */
export function stateCode(err: unknown): string | undefined {
  if (err instanceof StateError) return err.code;
  // cast: probing an error object for a string `code`
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Maps a store that could not open to a `CliError` naming `field`. */
function stateOpenError(err: unknown, field: string): CliError {
  const message = `${field}: ${errorMessage(err)}`;
  if (stateCode(err) === 'store_unavailable') {
    // Not the operator's input: the server is down or unreachable (exit 1, retry later).
    return new CliError(
      'state_unavailable',
      `${message} (is the PostgreSQL server up and reachable?)`,
      ExitCode.failed,
      {
        field,
        cause: err,
      },
    );
  }
  return badInput('state_invalid', message, field, err);
}

/**
 * Opens the store `choice` names: SQLite at its path (refused while another controller holds the
 * file), or PostgreSQL (its schema brought up to date). Throws `CliError`: `state_invalid` (exit 3,
 * naming `state_db` or `state`) for a store that cannot be used, `state_unavailable` (exit 1) for a
 * PostgreSQL server that cannot be reached, `config_invalid` for an unreadable password file.
 */
export function openControllerStore(choice: StateChoice): ControllerStore {
  if (choice.kind === 'postgres') return openPostgresStore(choice);
  try {
    return SqliteStateStore.open(choice.path);
  } catch (err) {
    const message = `state_db: ${errorMessage(err)}`;
    throw (
      systemCliError(err, { context: message, field: 'state_db' }) ??
      badInput('state_invalid', `${message} (is another controller running on this home?)`, 'state_db', err)
    );
  }
}
