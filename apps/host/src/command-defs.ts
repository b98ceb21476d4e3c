import { type CommandDef, type FlagDef, LOG_LEVEL_FLAG } from '@heddle/cli-kit';

// The definitions of `heddle-host init`, `run` and `id`: what each parses, what its --help says and
// what completion offers (docs/host.md describes them). Data only, so that help loads nothing else.

const JSON_FLAG: FlagDef = {
  name: 'json',
  kind: 'boolean',
  description: 'print the result as one line of JSON; errors as {"error":{code,message,field}} on stderr',
};

const CONFIG_FLAG: FlagDef = {
  name: 'config',
  kind: 'string',
  value: '<file>',
  default: './heddle-host/heddle-host.json',
  description: 'the host configuration',
};

/** `heddle-host init`. */
export const INIT: CommandDef = {
  name: 'init',
  summary: 'create a node key, a config and a trust file for a new host',
  positionals: [],
  flags: [
    {
      name: 'dir',
      kind: 'string',
      value: '<dir>',
      default: 'heddle-host',
      description: 'where to create them',
    },
    {
      name: 'listen',
      kind: 'string',
      value: '<host:port>',
      default: '0.0.0.0:7400',
      description: 'where the host listens ([::1]:7400 for IPv6)',
    },
    {
      name: 'controller',
      kind: 'string',
      value: '<pubkey-hex>',
      multiple: true,
      description: 'a controller key the host obeys',
    },
    {
      name: 'trust',
      kind: 'string',
      value: '<file>',
      description: 'trust anchors to copy (default: none pinned)',
    },
    {
      name: 'routes',
      kind: 'string',
      value: '<native,wasi>',
      default: 'native,wasi',
      description: 'the runtime routes it offers',
    },
    {
      name: 'tier',
      kind: 'string',
      value: '<discovered|paired|pinned>',
      default: 'paired',
      description: 'the node tier written to the config',
    },
    { name: 'force', kind: 'boolean', description: 'replace what is there (a new key, a new node id)' },
    JSON_FLAG,
  ],
  examples: ['init --dir /var/lib/heddle-host --controller <hex> --trust trust.json'],
};

/** `heddle-host run`. */
export const RUN: CommandDef = {
  name: 'run',
  summary: 'run the host daemon (JSON logs on stdout; SIGTERM stops it gracefully)',
  positionals: [],
  flags: [CONFIG_FLAG, LOG_LEVEL_FLAG, JSON_FLAG],
};

/** `heddle-host id`. */
export const ID: CommandDef = {
  name: 'id',
  summary: "print the host's node id and public key",
  positionals: [],
  flags: [CONFIG_FLAG, JSON_FLAG],
};
