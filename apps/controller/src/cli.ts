import { dispatchCli } from '@heddle/cli-kit';
import { type CliIo, processIo } from './io.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

// Each command's module is loaded only when that command runs, so `heddle ps` does not pay for the
// daemon, the package builder or the state store.
const COMMANDS: Record<string, { load: () => Promise<Command>; summary: string }> = {
  init: {
    load: async () => (await import('./commands/init.js')).init,
    summary: 'create the controller home: key, trust, policy, API token',
  },
  controller: {
    load: async () => (await import('./commands/controller.js')).controller,
    summary: 'run the controller daemon (controller run)',
  },
  node: {
    load: async () => (await import('./commands/node.js')).node,
    summary: 'add, list, remove, pin and refresh the nodes placed on',
  },
  place: {
    load: async () => (await import('./commands/place.js')).place,
    summary: 'place a signed package on the best node (--dry-run, --explain)',
  },
  ps: { load: async () => (await import('./commands/ps.js')).ps, summary: 'list the placed instances' },
  alerts: {
    load: async () => (await import('./commands/alerts.js')).alerts,
    summary: 'list (or ack) lost instances the controller did not move',
  },
  status: {
    load: async () => (await import('./commands/status.js')).status,
    summary: 'show one instance: placement and the host’s view',
  },
  logs: {
    load: async () => (await import('./commands/logs.js')).logs,
    summary: 'print an instance’s output (--follow)',
  },
  start: {
    load: async () => (await import('./commands/instance.js')).start,
    summary: 'start a placed instance',
  },
  stop: {
    load: async () => (await import('./commands/instance.js')).stop,
    summary: 'stop a running instance',
  },
  unload: {
    load: async () => (await import('./commands/instance.js')).unload,
    summary: 'unload an instance from its node',
  },
  keygen: {
    load: async () => (await import('./commands/keygen.js')).keygen,
    summary: 'create an Ed25519 key file (mode 0600)',
  },
  id: {
    load: async () => (await import('./commands/id.js')).id,
    summary: 'print the node id and public key of a key',
  },
  chain: {
    load: async () => (await import('./commands/chain.js')).chain,
    summary: 'verify, tail, prove and checkpoint an audit chain file',
  },
  pkg: {
    load: async () => (await import('./commands/pkg.js')).pkg,
    summary: 'create, build, sign, verify and inspect workload packages',
  },
  revoke: {
    load: async () => (await import('./commands/revoke.js')).revoke,
    summary: 'revoke packages, signers and artifacts; list revocations',
  },
  policy: {
    load: async () => (await import('./commands/policy.js')).policy,
    summary: 'check and validate governance policies',
  },
};

/** Commands that answer `--help` themselves (from their definitions, docs/cli-reference.md). */
const OPERATOR_HELP: ReadonlySet<string> = new Set([
  'node',
  'place',
  'ps',
  'alerts',
  'status',
  'logs',
  'start',
  'stop',
  'unload',
]);

/** The top-level help text. */
export function helpText(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [
    'heddle: place signed, governed workloads onto edge nodes',
    '',
    'usage: heddle <command> [arguments] [--json]',
    '',
    'commands:',
    ...rows,
    '',
    'exit codes: 0 ok, 1 check failed, 2 usage error, 3 bad input, 4 internal error',
  ].join('\n');
}

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never
 * throws: every failure is printed to standard error (as `{"error":{code,message}}` with `--json`).
 */
export function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  return dispatchCli(argv, io, {
    prefix: 'heddle',
    commands: COMMANDS,
    helpText,
    commandHelp: (name, command) =>
      OPERATOR_HELP.has(name)
        ? undefined
        : `heddle ${name}: ${command.summary}\n\nsee docs/cli.md for its arguments and flags`,
    run: async (command, args) => (await command.load())(args, io),
  });
}
