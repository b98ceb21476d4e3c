import { type CommandEntry, dispatchCli, type SubcommandEntry } from '@heddle/cli-kit';
import { type CliIo, processIo } from './io.js';
import { VERSION } from './version.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

/** A subcommand: its summary and, for those without a definition in the CLI reference, its usage. */
interface Sub extends SubcommandEntry {
  /** The synopsis after `heddle ` (its flags complete from it), for `<command> <sub> --help`. */
  readonly usage?: string;
}

/** A command of `heddle`, loaded only when it runs. */
interface Entry extends CommandEntry {
  readonly load: () => Promise<Command>;
  readonly subcommands?: Readonly<Record<string, Sub>>;
}

// Each command's module is loaded only when that command runs, so `heddle ps` does not pay for the
// daemon, the package builder or the state store.
const COMMANDS: Record<string, Entry> = {
  init: {
    load: async () => (await import('./commands/init.js')).init,
    summary: 'create the controller home: key, trust, policy, API token',
  },
  controller: {
    load: async () => (await import('./commands/controller.js')).controller,
    summary: 'run the controller daemon (controller run)',
    subcommands: {
      run: { summary: 'run the controller daemon in the foreground', usage: 'controller run [--home <dir>]' },
    },
  },
  node: {
    load: async () => (await import('./commands/node.js')).node,
    summary: 'add, list, remove, pin and refresh the nodes placed on',
    // The summaries are those of the definitions (commands/node.ts; a test checks they agree).
    subcommands: {
      add: { summary: 'learn a host by its signed describe and give it a trust tier' },
      'add-seed': { summary: 'register a Cognitum Seed, driven through its own HTTP API' },
      ls: { summary: 'list the known nodes: tier, liveness, version, routes, instances', aliases: ['list'] },
      rm: { summary: 'forget a node (refused while it has placements, unless --force)', aliases: ['remove'] },
      pin: { summary: 'pin a node’s key (after a key change) and optionally change its tier' },
      refresh: { summary: 'describe every node again and list them' },
    },
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
    subcommands: {
      verify: {
        summary: 'recompute every hash and link of a chain file (and check a checkpoint)',
        usage: 'chain verify <file> [--checkpoint <file> --public-key <hex>] [--json]',
      },
      tail: {
        summary: 'print the last events of a chain file',
        usage: 'chain tail <file> [--n <N>] [--kind <kind>] [--source <source>] [--json]',
      },
      proof: {
        summary: 'an inclusion proof of one event in the chain’s Merkle tree',
        usage: 'chain proof <file> <seq> [--size <N>] [--json]',
      },
      checkpoint: {
        summary: 'print a signed checkpoint of the chain as it is',
        usage: 'chain checkpoint <file> --key <keyfile> [--json]',
      },
    },
  },
  pkg: {
    load: async () => (await import('./commands/pkg.js')).pkg,
    summary: 'create, build, sign, verify and inspect workload packages',
    subcommands: {
      init: {
        summary: 'write a cog.json template',
        usage: 'pkg init [<dir>] [--id <id>] [--force] [--json]',
      },
      build: {
        summary: 'build a package from a source directory (and sign it)',
        usage: 'pkg build <src> --out <dir> [--key <file>] [--force] [--json]',
      },
      sign: { summary: 'add a signature to a package', usage: 'pkg sign <dir> --key <file> [--json]' },
      verify: {
        summary: 'verify a package against trust anchors (and revocations)',
        usage: 'pkg verify <dir> --trust <file> [--revocations <file>] [--max-file-bytes <N>] [--json]',
      },
      inspect: {
        summary: 'show a package’s envelope without verifying it',
        usage: 'pkg inspect <dir> [--json]',
      },
    },
  },
  revoke: {
    load: async () => (await import('./commands/revoke.js')).revoke,
    summary: 'revoke packages, signers and artifacts; list revocations',
    subcommands: Object.fromEntries([
      ...(['package', 'signer', 'artifact'] as const).map((kind) => [
        kind,
        {
          summary: `revoke a ${kind} in a signed revocation list`,
          usage: `revoke ${kind} <ref> --key <file> [--list <file>] [--trust <file>] [--reason <text>] [--json]`,
        },
      ]),
      [
        'ls',
        {
          summary: 'list a revocation list’s entries',
          usage: 'revoke ls [--list <file>] [--trust <file>] [--json]',
        },
      ],
    ]),
  },
  policy: {
    load: async () => (await import('./commands/policy.js')).policy,
    summary: 'check and validate governance policies',
    subcommands: {
      check: {
        summary: 'dry-run one gate decision and print the verdict and the deciding rule',
        usage:
          'policy check --policy <file> --action <action> [--context <json>] [--context-file <file>] [--kind <kind>] [--package-trust <t>] [--node-tier <t>] [--network <n>] [--secrets <bool>] [--emulated <bool>] [--accelerator <a>] [--resource-cost <0..1>] [--package-id <id>] [--signer-keys <k1,k2>] [--artifact-hashes <h1,h2>] [--agent <name>] [--teardown] [--revocations <file>] [--trust <file>] [--explain] [--json]',
      },
      validate: {
        summary: 'validate a policy file, listing every problem',
        usage: 'policy validate <file> [--json]',
      },
    },
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
    'heddle help <command> [<subcommand>] (or heddle <command> --help) shows one; heddle --version;',
    'heddle completion bash|zsh prints a shell completion script.',
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
    version: VERSION,
    commands: COMMANDS,
    helpText,
    commandHelp: (name, command, sub) => {
      // A command with subcommands asked without one: dispatchCli lists them.
      if (command.subcommands !== undefined && sub === undefined) return undefined;
      // The operator commands answer from their definitions (docs/cli-reference.md).
      if (OPERATOR_HELP.has(name)) return undefined;
      const s = sub === undefined ? undefined : command.subcommands?.[sub];
      if (s?.usage !== undefined) return `usage: heddle ${s.usage}\n\n${s.summary}\n\nsee docs/cli.md`;
      const what = `heddle ${name}${sub === undefined ? '' : ` ${sub}`}`;
      return `${what}: ${(s ?? command).summary}\n\nsee docs/cli.md for its arguments and flags`;
    },
    run: async (command, args) => (await command.load())(args, io),
    completionFlags,
  });
}

/** The flags of every command and subcommand, from the definitions and the usages (for completion). */
export async function completionFlags(): Promise<Record<string, string[]>> {
  const { OPERATOR_COMMANDS } = await import('./cli-reference.js');
  const { COMMON_FLAGS } = await import('./command-def.js');
  const flags: Record<string, string[]> = {};
  for (const def of OPERATOR_COMMANDS) flags[def.name] = [...def.flags, ...COMMON_FLAGS].map((f) => f.name);
  for (const [name, c] of Object.entries(COMMANDS)) {
    for (const [sub, s] of Object.entries(c.subcommands ?? {})) {
      if (s.usage === undefined) continue;
      flags[`${name} ${sub}`] = [
        ...new Set([...s.usage.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1] as string)),
      ];
    }
  }
  return flags;
}

/** The commands of `heddle` (for tests and the completion scripts). */
export const COMMAND_TABLE: Readonly<Record<string, Entry>> = COMMANDS;
