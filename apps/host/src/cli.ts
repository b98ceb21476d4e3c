import { type CommandDef, dispatchCli, type ProgramDef } from '@heddle/cli-kit';
import { ID, INIT, RUN } from './command-defs.js';
import { type CliIo, processIo } from './io.js';
import { VERSION } from './version.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

/** A command of `heddle-host`: its definition, and its code, loaded only when it runs. */
export interface Entry extends CommandDef {
  readonly load: () => Promise<Command>;
}

// Each command's module is loaded only when that command runs: `--help` and `--version` (rendered
// from the definitions, which are data) load neither the daemon nor the crypto of `init`.
const COMMANDS: readonly Entry[] = [
  { ...INIT, load: async () => (await import('./commands/init.js')).init },
  { ...RUN, load: async () => (await import('./commands/run.js')).run },
  { ...ID, load: async () => (await import('./commands/id.js')).id },
];

/** `heddle-host` as its help, its dispatcher and its completion see it. */
export const PROGRAM: ProgramDef<Entry> = {
  name: 'heddle-host',
  version: VERSION,
  summary: 'the Heddle host daemon (runs verified, governed workloads for authorised controllers)',
  usage: '<command> [arguments] [--json]',
  commands: COMMANDS,
  exits: {
    0: 'ok',
    1: 'failed while running',
    2: 'usage error',
    3: 'bad input or config',
    4: 'internal error',
  },
  docs: 'docs/host.md',
};

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never
 * throws: every failure is printed to standard error (as `{"error":{code,message,field}}` with `--json`).
 */
export function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  return dispatchCli(argv, io, {
    program: PROGRAM,
    run: async (command, args) => (await command.load())(args, io),
  });
}
