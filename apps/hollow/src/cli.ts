import { type CommandDef, dispatchCli, type ProgramDef } from '@heddle/cli-kit';
import { RUN } from './command-defs.js';
import { type CliIo, processIo } from './io.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

/** A command of `heddle-hollow`: its definition, and its code, loaded only when it runs. */
export interface Entry extends CommandDef {
  readonly load: () => Promise<Command>;
}

/** The program's version. */
export const VERSION = '0.1.0';

const COMMANDS: readonly Entry[] = [{ ...RUN, load: async () => (await import('./commands/run.js')).run }];

/** `heddle-hollow` as its help and dispatcher see it. */
export const PROGRAM: ProgramDef<Entry> = {
  name: 'heddle-hollow',
  version: VERSION,
  summary: 'hollow hosts: thousands of simulated Heddle hosts in one process, for scale tests',
  usage: '<command> [arguments]',
  commands: COMMANDS,
  exits: {
    0: 'ok',
    1: 'failed while running',
    2: 'usage error',
    3: 'bad input or config',
    4: 'internal error',
  },
  docs: 'docs/hollow.md',
};

/** Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never throws. */
export function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  return dispatchCli(argv, io, {
    program: PROGRAM,
    run: async (command, args) => (await command.load())(args, io),
  });
}
