import type { CommandDef, FlagDef, PositionalDef } from '@heddle/cli-kit';

// The definitions of every `heddle-seed` command: what each parses, what its --help says and what
// completion offers (docs/seed.md describes them). Data only, so that help loads nothing else.

const HOME: FlagDef = {
  name: 'home',
  kind: 'string',
  value: '<dir>',
  description: 'the profile directory (default: $HEDDLE_SEED_HOME, else ~/.heddle-seed)',
};
const JSON_FLAG: FlagDef = {
  name: 'json',
  kind: 'boolean',
  description: 'print the result as one line of JSON; errors as {"error":{code,message,field}} on stderr',
};
/** `--home` and `--json`, which every command takes (after its own flags). */
const COMMON: readonly FlagDef[] = [HOME, JSON_FLAG];
const ID: PositionalDef = { name: 'id', description: 'the cog id ([a-z0-9][a-z0-9._-]{0,63})' };
const COG_REF: PositionalDef = { name: 'id@version', description: 'a store cog at an exact version' };
const CLIENT_NAME: FlagDef = {
  name: 'client-name',
  kind: 'string',
  value: '<name>',
  description: 'the name this client pairs as (1..64 letters, digits, space, . _ -)',
};

/** A command with `--home` and `--json` after its own flags. */
const cmd = (def: CommandDef): CommandDef => ({ ...def, flags: [...(def.flags ?? []), ...COMMON] });

/** `heddle-seed init`. */
export const INIT: CommandDef = cmd({
  name: 'init',
  summary: 'create a Seed profile (url, SPKI pin); shows the SPKI of an https Seed until you pin it',
  positionals: [],
  flags: [
    {
      name: 'url',
      kind: 'string',
      value: '<url>',
      required: true,
      description: 'the Seed API (https://…, or http:// on the USB link or loopback)',
    },
    {
      name: 'pin-spki',
      kind: 'string',
      value: '<hex>',
      description: 'SHA-256 (64 hex) of the Seed certificate key',
    },
    { name: 'allow-plain-http', kind: 'boolean', description: 'allow http:// (USB link or loopback only)' },
    CLIENT_NAME,
    { name: 'force', kind: 'boolean', description: 'replace an existing profile' },
  ],
  examples: ['init --url https://seed.local:8443', 'init --url https://seed.local:8443 --pin-spki <hex>'],
});

/** `heddle-seed pair`. */
export const PAIR: CommandDef = cmd({
  name: 'pair',
  summary: 'pair with the Seed (during its pairing window) and store the token (0600)',
  positionals: [],
  flags: [
    { name: 'open-window', kind: 'boolean', description: 'open the pairing window first' },
    CLIENT_NAME,
  ],
});

/** `heddle-seed unpair`. */
export const UNPAIR: CommandDef = cmd({
  name: 'unpair',
  summary: 'forget the token (delete the token file)',
  positionals: [],
});

/** `heddle-seed status`. */
export const STATUS: CommandDef = cmd({
  name: 'status',
  summary: "the Seed's status, identity and pairing state",
  positionals: [],
});

/** `heddle-seed store`. */
export const STORE: CommandDef = cmd({
  name: 'store',
  summary: "the Seed's store catalog, marking pinned cogs and version drift",
  positionals: [],
});

/** `heddle-seed ls`. */
export const LS: CommandDef = cmd({
  name: 'ls',
  summary: 'the cogs installed on the Seed (and which this tool installed)',
  positionals: [],
});

/** `heddle-seed pin add`. */
export const PIN_ADD: CommandDef = cmd({
  name: 'pin add',
  summary: 'pin a store cog at a version (and its sha256, its console commands)',
  positionals: [COG_REF],
  flags: [
    { name: 'sha256', kind: 'string', value: '<hex>', description: 'the store artifact’s SHA-256 (64 hex)' },
    {
      name: 'console',
      kind: 'string',
      value: '<command>',
      multiple: true,
      description: 'a console command `console` may send',
    },
  ],
  examples: ['pin add air-quality@1.2.0 --console=--once'],
});

/** `heddle-seed pin ls`. */
export const PIN_LS: CommandDef = cmd({ name: 'pin ls', summary: 'list the pins', positionals: [] });

/** `heddle-seed pin rm`. */
export const PIN_RM: CommandDef = cmd({ name: 'pin rm', summary: 'remove a pin', positionals: [ID] });

/** `heddle-seed pin`. */
export const PIN: CommandDef = {
  name: 'pin',
  summary: 'add, list and remove operator pins (pins.json)',
  subcommands: [PIN_ADD, PIN_LS, PIN_RM],
};

/** `heddle-seed run`. */
export const RUN: CommandDef = cmd({
  name: 'run',
  summary: 'install (if missing) and load a pinned cog through the governed host, then start it',
  positionals: [COG_REF],
  flags: [
    { name: 'no-start', kind: 'boolean', description: 'load it but do not start it' },
    {
      name: 'set',
      kind: 'string',
      value: '<k=v>',
      multiple: true,
      description: 'a config value (true, false, null and numbers are typed)',
    },
  ],
});

/** `heddle-seed start`. */
export const START: CommandDef = cmd({ name: 'start', summary: 'start a loaded cog', positionals: [ID] });

/** `heddle-seed stop`. */
export const STOP: CommandDef = cmd({
  name: 'stop',
  summary: 'stop a cog; prints its last output as evidence',
  positionals: [ID],
});

/** `heddle-seed logs`. */
export const LOGS: CommandDef = cmd({
  name: 'logs',
  summary: "print a cog's last output lines",
  positionals: [ID],
  flags: [
    { name: 'lines', kind: 'string', value: '<N>', default: '100', description: 'how many lines (1..10000)' },
  ],
});

/** `heddle-seed console`. */
export const CONSOLE: CommandDef = cmd({
  name: 'console',
  summary: 'run one pinned console command (running cogs are preempted and resumed)',
  positionals: [
    ID,
    {
      name: 'command',
      description:
        'the pinned console command, its words joined by spaces (after --, words may start with -)',
      variadic: true,
    },
  ],
  examples: ['console air-quality -- --once --interval 1'],
});

/** `heddle-seed rm`. */
export const RM: CommandDef = cmd({
  name: 'rm',
  summary: 'unload a cog (uninstalls it only if this tool installed it)',
  positionals: [ID],
});

/** `heddle-seed config get`. */
export const CONFIG_GET: CommandDef = cmd({
  name: 'config get',
  summary: "print a cog's configuration on the Seed",
  positionals: [ID],
});

/** `heddle-seed config set`. */
export const CONFIG_SET: CommandDef = cmd({
  name: 'config set',
  summary: "change a cog's configuration values on the Seed",
  positionals: [
    ID,
    { name: 'k=v', description: 'a value (true, false, null and numbers are typed)', variadic: true },
  ],
});

/** `heddle-seed config`. */
export const CONFIG: CommandDef = {
  name: 'config',
  summary: "read or change a cog's configuration on the Seed",
  subcommands: [CONFIG_GET, CONFIG_SET],
};

/** `heddle-seed simulator`. */
export const SIMULATOR: CommandDef = cmd({
  name: 'simulator',
  summary: 'run a Seed simulator in the foreground (for trying the CLI without hardware)',
  positionals: [],
  flags: [
    { name: 'https', kind: 'boolean', description: 'serve HTTPS (a self-signed certificate)' },
    { name: 'port', kind: 'string', value: '<N>', description: 'the port (default: any free one)' },
    {
      name: 'host',
      kind: 'string',
      value: '<host>',
      default: '127.0.0.1',
      description: 'the loopback address to listen on',
    },
    { name: 'pair-window', kind: 'boolean', description: 'open the pairing window at start' },
  ],
});
