import { dispatchCli } from '@heddle/cli-kit';
import { id } from './commands/id.js';
import { INIT_FLAGS, init } from './commands/init.js';
import { run } from './commands/run.js';
import { type CliIo, processIo } from './io.js';
import { VERSION } from './version.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

// The flags each command parses (commands/*.ts), for completion.
const COMMANDS: Record<string, { run: Command; summary: string; flags: readonly string[] }> = {
  init: {
    run: init,
    summary: 'create a node key, a config and a trust file for a new host',
    flags: [...Object.keys(INIT_FLAGS), 'json'],
  },
  run: {
    run,
    summary: 'run the host daemon (JSON logs on stdout; SIGTERM stops it gracefully)',
    flags: ['config', 'json'],
  },
  id: { run: id, summary: "print the host's node id and public key", flags: ['config', 'json'] },
};

/** The top-level help text. */
export function helpText(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(6)} ${c.summary}`);
  return [
    'heddle-host: the Heddle host daemon (runs verified, governed workloads for authorised controllers)',
    '',
    'usage: heddle-host <command> [arguments] [--json]',
    '',
    'commands:',
    ...rows,
    '',
    '  init [--dir D] [--listen HOST:PORT] [--controller PUBKEY_HEX]... [--trust FILE]',
    '       [--routes native,wasi] [--tier discovered|paired|pinned] [--force]',
    '  run  [--config F]      (default ./heddle-host/heddle-host.json)',
    '  id   [--config F]',
    '',
    'heddle-host help <command> (or heddle-host <command> --help) shows one; heddle-host --version;',
    'heddle-host completion bash|zsh prints a shell completion script.',
    'exit codes: 0 ok, 1 failed while running, 2 usage error, 3 bad input or config, 4 internal error',
    'see docs/host.md',
  ].join('\n');
}

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never
 * throws: every failure is printed to standard error (as `{"error":{code,message,field}}` with `--json`).
 */
export function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  return dispatchCli(argv, io, {
    prefix: 'heddle-host',
    version: VERSION,
    commands: COMMANDS,
    helpText,
    commandHelp: (name, command) =>
      `heddle-host ${name}: ${command.summary}\n\nsee docs/host.md for its flags and the configuration`,
    run: (command, args) => command.run(args, io),
  });
}
