import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errorMessage, parseArgv, synopsis } from '@heddle/cli-kit';
import { copyState, countState, type StateCounts } from '@heddle/control-plane';
import { SqliteStateStore } from '@heddle/control-plane/sqlite';
import { badInput, CliError, ExitCode, usageError } from '../cli-error.js';
import { type ControllerConfig, loadControllerConfig } from '../controller-config.js';
import { STATE_MIGRATE } from '../defs/state.js';
import { CONTROLLER_CONFIG_FILE, homeDir } from '../home.js';
import { type CliIo, emit } from '../io.js';
import { openPostgresStore, type PostgresChoice, stateCode } from '../state-open.js';

/** A URL as printed: its password replaced by `***`. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

function urlChoice(url: string): PostgresChoice {
  if (!/^postgres(ql)?:\/\/\S+$/.test(url)) throw usageError('--to: expected a postgres:// URL', 'to');
  return {
    kind: 'postgres',
    url,
    host: undefined,
    port: undefined,
    database: undefined,
    user: undefined,
    passwordFile: undefined,
    callTimeoutMs: undefined,
    maxRetries: undefined,
  };
}

const total = (c: StateCounts): number => Object.values(c).reduce((a, b) => a + b, 0);

/**
 * `heddle state migrate [--home D] [--from FILE] [--to URL] [--force] [--json]`: copies an existing
 * SQLite state into a PostgreSQL database in one transaction, then counts both and compares. The
 * source is opened with the SQLite store's lock (refused while a controller runs on it). A target
 * that already holds a state is refused (`state_target_not_empty`, exit 3) unless `--force` empties it
 * first. Exit 1 with `state_unavailable` when the server cannot be reached, `state_verify_failed` when
 * the counts differ after the copy, `state_migrate_failed` for any other failure of the copy.
 */
export async function state(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'migrate') throw usageError(`usage: ${synopsis('heddle', STATE_MIGRATE)}`, 'subcommand');
  const { strings, booleans } = parseArgv('heddle', STATE_MIGRATE, rest);
  let config: ControllerConfig | undefined;
  const home = (): ControllerConfig => {
    config ??= loadControllerConfig(join(homeDir(strings.home, io), CONTROLLER_CONFIG_FILE));
    return config;
  };
  const from = strings.from === undefined ? home().stateDb : resolve(io.cwd, strings.from);
  let to: PostgresChoice;
  if (strings.to !== undefined) to = urlChoice(strings.to);
  else {
    const choice = home().state;
    if (choice.kind !== 'postgres') {
      throw badInput(
        'state_target_missing',
        `give --to, or a state section of kind postgres in ${home().path}`,
        'to',
      );
    }
    to = choice;
  }
  const target =
    to.url === undefined
      ? `postgres://${to.user ?? ''}@${to.host ?? ''}:${to.port ?? 5432}/${to.database ?? ''}`
      : redact(to.url);

  if (!existsSync(from))
    throw badInput('state_source_missing', `--from: no SQLite state database at ${from}`, 'from');
  let source: SqliteStateStore;
  try {
    source = SqliteStateStore.open(from, { busyTimeoutMs: 500 });
  } catch (err) {
    throw badInput(
      'state_invalid',
      `--from: ${errorMessage(err)} (stop the controller that runs on it first)`,
      'from',
      err,
    );
  }
  try {
    let counts: StateCounts;
    try {
      counts = countState(source);
    } catch (err) {
      throw badInput('state_invalid', `--from: ${errorMessage(err)}`, 'from', err);
    }
    const dest = openPostgresStore(to);
    try {
      const before = countState(dest);
      if (total(before) > 0) {
        if (booleans.force !== true) {
          throw badInput(
            'state_target_not_empty',
            `--to: ${target} already holds a state (${total(before)} records); give --force to replace it`,
            'to',
          );
        }
        dest.clearAll();
      }
      try {
        counts = copyState(source, dest);
      } catch (err) {
        if (stateCode(err) === 'store_unavailable') {
          throw new CliError('state_unavailable', `--to: ${errorMessage(err)}`, ExitCode.failed, {
            field: 'to',
            cause: err,
          });
        }
        if (stateCode(err) === 'corrupt' && /after the copy/.test(errorMessage(err))) {
          throw new CliError('state_verify_failed', errorMessage(err), ExitCode.failed, {
            field: 'to',
            cause: err,
          });
        }
        throw new CliError(
          'state_migrate_failed',
          `the copy failed (nothing was kept): ${errorMessage(err)}`,
          ExitCode.failed,
          {
            field: 'to',
            cause: err,
          },
        );
      }
    } catch (err) {
      if (stateCode(err) === 'store_unavailable') {
        throw new CliError('state_unavailable', `--to: ${errorMessage(err)}`, ExitCode.failed, {
          field: 'to',
          cause: err,
        });
      }
      throw err;
    } finally {
      dest.close();
    }
    const result = { from, to: target, counts, forced: booleans.force === true };
    emit(io, booleans.json === true, result, () => [
      `copied ${from} to ${target}`,
      ...Object.entries(counts).map(([k, n]) => `  ${k}: ${n}`),
      'counts verified',
    ]);
    return ExitCode.ok;
  } finally {
    source.close();
  }
}
