import { type CommandDef, dispatchCli, type ProgramDef } from '@heddle/cli-kit';
import {
  CONFIG,
  CONSOLE,
  INIT,
  LOGS,
  LS,
  PAIR,
  PIN,
  RM,
  RUN,
  SIMULATOR,
  START,
  STATUS,
  STOP,
  STORE,
  UNPAIR,
} from './command-defs.js';
import { type CliIo, processIo, redactingIo } from './io.js';
import { VERSION } from './version.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

/** A command of `heddle-seed`: its definition, and its code, loaded only when it runs. */
export interface Entry extends CommandDef {
  readonly load: () => Promise<Command>;
}

// Each command's module is loaded only when that command runs, so `heddle-seed pin ls` does not pay
// for the runtime, the gate or the simulator, and `--help` (rendered from the definitions, which are
// data) loads none of them.
const COMMANDS: readonly Entry[] = [
  { ...INIT, load: async () => (await import('./commands/init.js')).init },
  { ...PAIR, load: async () => (await import('./commands/pair.js')).pair },
  { ...UNPAIR, load: async () => (await import('./commands/pair.js')).unpair },
  { ...STATUS, load: async () => (await import('./commands/status.js')).status },
  { ...STORE, load: async () => (await import('./commands/store.js')).store },
  { ...LS, load: async () => (await import('./commands/ls.js')).ls },
  { ...PIN, load: async () => (await import('./commands/pin.js')).pin },
  { ...RUN, load: async () => (await import('./commands/run.js')).run },
  { ...START, load: async () => (await import('./commands/lifecycle.js')).start },
  { ...STOP, load: async () => (await import('./commands/lifecycle.js')).stop },
  { ...LOGS, load: async () => (await import('./commands/lifecycle.js')).logs },
  { ...CONSOLE, load: async () => (await import('./commands/console.js')).consoleCommand },
  { ...RM, load: async () => (await import('./commands/lifecycle.js')).rm },
  { ...CONFIG, load: async () => (await import('./commands/config.js')).config },
  { ...SIMULATOR, load: async () => (await import('./commands/simulator.js')).simulator },
];

/** `heddle-seed` as its help, its dispatcher and its completion see it. */
export const PROGRAM: ProgramDef<Entry> = {
  name: 'heddle-seed',
  version: VERSION,
  summary: 'drive a Cognitum Seed on its own: operator pins, a governed host, a local audit chain',
  usage: '<command> [arguments] [--home D] [--json]',
  commands: COMMANDS,
  notes: ['the profile directory: --home D, else $HEDDLE_SEED_HOME, else ~/.heddle-seed'],
  exits: {
    0: 'ok',
    1: 'failed or refused on the Seed',
    2: 'usage error',
    3: 'bad input',
    4: 'internal error',
  },
  docs: 'docs/seed.md',
};

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never
 * throws: every failure is printed to standard error (as `{"error":{code,message,field}}` with
 * `--json`). Every line written goes through a redacting io: a token a command registered is never
 * printed.
 */
export function runCli(argv: readonly string[], rawIo: CliIo = processIo): Promise<number> {
  const io = redactingIo(rawIo);
  return dispatchCli(argv, io, {
    program: PROGRAM,
    run: async (command, args) => {
      const run = await command.load();
      try {
        return await run(args, io);
      } catch (err) {
        // Mapped here, not by dispatchCli's `toCliError` option: the mapping knows the Seed adapter's
        // errors, whose module `--help` and `--version` need not load.
        throw (await import('./cli-error.js')).toCliError(err);
      }
    },
  });
}
