import { positional, synopsis } from '@heddle/cli-kit';
import type { SeedPin } from '@heddle/seed-adapter';
import { cogId, cogRef, parseSeedArgs } from '../args.js';
import { badInput, ExitCode, usageError } from '../cli-error.js';
import { PIN, PIN_ADD, PIN_LS, PIN_RM } from '../command-defs.js';
import { homeDir } from '../home.js';
import { type CliIo, emit } from '../io.js';
import { readPins, writePins } from '../pins-file.js';
import { table } from '../table.js';

/**
 * `heddle-seed pin add|ls|rm`: the operator's pins (`pins.json` of the profile). Only pinned cogs
 * run; a pin names an exact version, optionally the store's SHA-256, and the only console commands
 * `console` may send. Local only: nothing is sent to the Seed.
 */
export async function pin(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'add') return add(rest, io);
  if (sub === 'ls') return list(rest, io);
  if (sub === 'rm') return remove(rest, io);
  throw usageError(`expected add, ls or rm\nusage: ${synopsis('heddle-seed', PIN)}`);
}

function add(args: readonly string[], io: CliIo): number {
  const a = parseSeedArgs(PIN_ADD, args);
  const home = homeDir(a.home, io);
  const { id, version } = cogRef(positional(a, 0), 'id@version');
  const sha = a.strings.sha256?.toLowerCase();
  if (sha !== undefined && !/^[0-9a-f]{64}$/.test(sha)) {
    throw badInput('invalid_argument', '--sha256: expected 64 hex characters', 'sha256');
  }
  const entry: SeedPin = {
    id,
    version,
    ...(sha === undefined ? {} : { sha256: sha }),
    console_commands: a.lists.console ?? [],
  };
  const pins = readPins(home);
  const replaced = pins.find((p) => p.id === id);
  writePins(home, [...pins.filter((p) => p.id !== id), entry]);
  emit(io, a.json, { pinned: entry, replaced: replaced ?? null }, () => [
    `pinned ${id}@${version}${sha === undefined ? '' : ` sha256 ${sha.slice(0, 12)}…`}${
      replaced === undefined ? '' : ` (was ${replaced.version})`
    }`,
  ]);
  return ExitCode.ok;
}

function list(args: readonly string[], io: CliIo): number {
  const a = parseSeedArgs(PIN_LS, args);
  const pins = readPins(homeDir(a.home, io));
  emit(io, a.json, { pins }, () =>
    pins.length === 0
      ? ['no pins (add one: heddle-seed pin add <id>@<version>)']
      : table(
          ['ID', 'VERSION', 'SHA256', 'CONSOLE'],
          pins.map((p) => [
            p.id,
            p.version,
            p.sha256 === undefined ? '-' : `${p.sha256.slice(0, 12)}…`,
            p.console_commands.length === 0 ? '-' : p.console_commands.join(', '),
          ]),
        ),
  );
  return ExitCode.ok;
}

function remove(args: readonly string[], io: CliIo): number {
  const a = parseSeedArgs(PIN_RM, args);
  const home = homeDir(a.home, io);
  const id = cogId(positional(a, 0));
  const pins = readPins(home);
  if (!pins.some((p) => p.id === id)) throw badInput('not_pinned', `${id} is not pinned`, 'id');
  writePins(
    home,
    pins.filter((p) => p.id !== id),
  );
  emit(io, a.json, { removed: id }, () => [`unpinned ${id} (a loaded instance keeps running until rm)`]);
  return ExitCode.ok;
}
