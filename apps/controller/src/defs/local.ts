import { type CommandDef, type FlagDef, LOG_LEVEL_FLAG } from '@heddle/cli-kit';
import { JSON_FLAG } from '../command-def.js';

// The definitions of `heddle init`, `controller run`, `keygen` and `id`: what each parses and what its
// --help says (docs/cli.md describes them). Data only, so that help and completion load nothing else.

/** `--home <dir>`: the controller home. */
export const HOME_FLAG: FlagDef = {
  name: 'home',
  kind: 'string',
  value: '<dir>',
  description: 'the controller home (default: $HEDDLE_HOME, else ~/.heddle)',
};

/** `heddle init`. */
export const INIT: CommandDef = {
  name: 'init',
  summary: 'create the controller home: key, trust, policy, API token',
  positionals: [],
  flags: [
    HOME_FLAG,
    {
      name: 'trust',
      kind: 'string',
      value: '<file>',
      description: 'trust anchors to copy (default: the controller key as operator)',
    },
    {
      name: 'policy',
      kind: 'string',
      value: '<file>',
      description: 'a policy to copy (default: the default policy)',
    },
    {
      name: 'api-port',
      kind: 'string',
      value: 'N',
      description: 'the operator API port on 127.0.0.1 (0: any free port)',
    },
    {
      name: 'remote',
      kind: 'string',
      value: '<ip>:<port>',
      description:
        'also listen there over TLS for other machines (a self-signed certificate is made; its fingerprint is printed)',
    },
    { name: 'force', kind: 'boolean', description: 'replace an existing home (a new key)' },
    JSON_FLAG,
  ],
  examples: ['init --home ./ctl --trust trust.json'],
};

/** `heddle controller run`. */
export const CONTROLLER_RUN: CommandDef = {
  name: 'controller run',
  summary: 'run the controller daemon in the foreground',
  positionals: [],
  flags: [
    HOME_FLAG,
    {
      name: 'accept-state-loss',
      kind: 'boolean',
      description: 'start once with a state database behind the chain (chained)',
    },
    {
      name: 'accept-chain-loss',
      kind: 'boolean',
      description: 'start once with a chain behind the state database (chained)',
    },
    LOG_LEVEL_FLAG,
    JSON_FLAG,
  ],
};

/** `heddle controller`. */
export const CONTROLLER: CommandDef = {
  name: 'controller',
  summary: 'run the controller daemon (controller run)',
  subcommands: [CONTROLLER_RUN],
};

/** `heddle keygen`. */
export const KEYGEN: CommandDef = {
  name: 'keygen',
  summary: 'create an Ed25519 key file (mode 0600)',
  positionals: [],
  flags: [
    {
      name: 'out',
      kind: 'string',
      value: '<file>',
      default: 'heddle.key',
      description: 'where to write the key',
    },
    { name: 'force', kind: 'boolean', description: 'replace an existing file' },
    JSON_FLAG,
  ],
};

/** `heddle id`. */
export const ID: CommandDef = {
  name: 'id',
  summary: 'print the node id and public key of a key',
  positionals: [
    {
      name: 'key',
      description: 'a key file, a public key file (PEM) or a public key in hex',
    },
  ],
  flags: [JSON_FLAG],
};
