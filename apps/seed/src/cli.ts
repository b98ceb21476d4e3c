import { type CommandEntry, dispatchCli } from '@heddle/cli-kit';
import { toCliError } from './cli-error.js';
import { type CliIo, processIo, redactingIo } from './io.js';
import { VERSION } from './version.js';

type Command = (args: readonly string[], io: CliIo) => number | Promise<number>;

// Each command's module is loaded only when that command runs, so `heddle-seed pin ls` does not pay
// for the runtime, the gate or the simulator.
interface Entry extends CommandEntry {
  readonly load: () => Promise<Command>;
  /** The synopsis after `heddle-seed ` (`--help` prints it; completion takes the flags from it). */
  readonly usage: string;
}

const COMMANDS: Record<string, Entry> = {
  init: {
    load: async () => (await import('./commands/init.js')).init,
    summary: 'create a Seed profile (url, SPKI pin); shows the SPKI of an https Seed until you pin it',
    usage: 'init --url <url> [--pin-spki <hex>] [--allow-plain-http] [--client-name N] [--force]',
  },
  pair: {
    load: async () => (await import('./commands/pair.js')).pair,
    summary: 'pair with the Seed (during its pairing window) and store the token (0600)',
    usage: 'pair [--open-window] [--client-name N]',
  },
  unpair: {
    load: async () => (await import('./commands/pair.js')).unpair,
    summary: 'forget the token (delete the token file)',
    usage: 'unpair',
  },
  status: {
    load: async () => (await import('./commands/status.js')).status,
    summary: "the Seed's status, identity and pairing state",
    usage: 'status',
  },
  store: {
    load: async () => (await import('./commands/store.js')).store,
    summary: "the Seed's store catalog, marking pinned cogs and version drift",
    usage: 'store',
  },
  ls: {
    load: async () => (await import('./commands/ls.js')).ls,
    summary: 'the cogs installed on the Seed (and which this tool installed)',
    usage: 'ls',
  },
  pin: {
    load: async () => (await import('./commands/pin.js')).pin,
    summary: 'add, list and remove operator pins (pins.json)',
    usage: 'pin add <id>@<version> [--sha256 H] [--console=CMD]... | pin ls | pin rm <id>',
    subcommands: {
      add: {
        summary: 'pin a store cog at a version (and its sha256, its console commands)',
        flags: ['sha256', 'console'],
      },
      ls: { summary: 'list the pins' },
      rm: { summary: 'remove a pin' },
    },
  },
  run: {
    load: async () => (await import('./commands/run.js')).run,
    summary: 'install (if missing) and load a pinned cog through the governed host, then start it',
    usage: 'run <id>@<version> [--no-start] [--set k=v]...',
  },
  start: {
    load: async () => (await import('./commands/lifecycle.js')).start,
    summary: 'start a loaded cog',
    usage: 'start <id>',
  },
  stop: {
    load: async () => (await import('./commands/lifecycle.js')).stop,
    summary: 'stop a cog; prints its last output as evidence',
    usage: 'stop <id>',
  },
  logs: {
    load: async () => (await import('./commands/lifecycle.js')).logs,
    summary: "print a cog's last output lines",
    usage: 'logs <id> [--lines N]',
  },
  console: {
    load: async () => (await import('./commands/console.js')).consoleCommand,
    summary: 'run one pinned console command (running cogs are preempted and resumed)',
    usage: 'console <id> [--] <command>...',
  },
  rm: {
    load: async () => (await import('./commands/lifecycle.js')).rm,
    summary: 'unload a cog (uninstalls it only if this tool installed it)',
    usage: 'rm <id>',
  },
  config: {
    load: async () => (await import('./commands/config.js')).config,
    summary: "read or change a cog's configuration on the Seed",
    usage: 'config get <id> | config set <id> k=v...',
    subcommands: {
      get: { summary: "print a cog's configuration on the Seed" },
      set: { summary: "change a cog's configuration values on the Seed" },
    },
  },
  simulator: {
    load: async () => (await import('./commands/simulator.js')).simulator,
    summary: 'run a Seed simulator in the foreground (for trying the CLI without hardware)',
    usage: 'simulator [--https] [--port N] [--host H]',
  },
};

/** The top-level help text. */
export function helpText(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [
    'heddle-seed: drive a Cognitum Seed on its own: operator pins, a governed host, a local audit chain',
    '',
    'usage: heddle-seed <command> [arguments] [--home D] [--json]',
    '',
    'commands:',
    ...rows,
    '',
    'heddle-seed help <command> (or heddle-seed <command> --help) shows one; heddle-seed --version;',
    'heddle-seed completion bash|zsh prints a shell completion script.',
    'the profile directory: --home D, else $HEDDLE_SEED_HOME, else ~/.heddle-seed',
    'exit codes: 0 ok, 1 failed or refused on the Seed, 2 usage error, 3 bad input, 4 internal error',
    'see docs/seed.md',
  ].join('\n');
}

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code. Never
 * throws: every failure is printed to standard error (as `{"error":{code,message,field}}` with
 * `--json`). Every line written goes through a redacting io: a token a command registered is never
 * printed.
 */
export function runCli(argv: readonly string[], rawIo: CliIo = processIo): Promise<number> {
  const io = redactingIo(rawIo);
  // `--help` after `--` belongs to the command's arguments (`console air-quality -- --help` runs `--help`);
  // `help <command>` asks for the command's help too.
  const end = argv.indexOf('--');
  const helpAsked =
    argv[0] === 'help' || argv.slice(1, end < 0 ? undefined : end).some((x) => x === '--help' || x === '-h');
  return dispatchCli(argv, io, {
    prefix: 'heddle-seed',
    version: VERSION,
    commands: COMMANDS,
    helpText,
    commandHelp: (_name, command) =>
      helpAsked
        ? `usage: heddle-seed ${command.usage} [--home D] [--json]\n\n${command.summary}\n\nsee docs/seed.md`
        : undefined,
    run: async (command, args) => (await command.load())(args, io),
    toCliError,
    completionFlags: () => {
      const flags: Record<string, string[]> = {};
      for (const [name, c] of Object.entries(COMMANDS)) {
        flags[name] = [...new Set([...c.usage.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1] as string))];
        flags[name].push('home', 'json');
      }
      return flags;
    },
  });
}
