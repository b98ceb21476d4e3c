import type { CommandDef } from '@heddle/cli-kit';
import { JSON_FLAG, type OperatorCommandDef, type OperatorGroupDef, operatorDef } from '../command-def.js';

// The definitions of `heddle context ...` (local: where the CLI finds a controller) and
// `heddle operator ...` (admin: who may use the operator API). Data only.

const EXITS_OPERATOR = {
  0: 'done',
  1: 'the controller refused or could not be reached (operator_exists, controller_not_running, fingerprint_mismatch)',
  2: 'usage error',
  3: 'bad input (invalid_input naming the field, unknown_operator, forbidden, unauthorized)',
  4: 'internal error',
} as const;

/** `heddle operator add`. */
export const OPERATOR_ADD: OperatorCommandDef = operatorDef({
  name: 'operator add',
  summary: 'let an operator use the API, with a key or a token, in a role (admin)',
  description:
    'With --key, the operator signs every request with that Ed25519 key (`heddle keygen` makes one; give its public key as 64 hex, or a file holding it or the key file). With --token, the controller makes a bearer token, stores only its SHA-256 and prints it this once. Roles: viewer (GET routes only), operator (also place, start, stop, unload, alerts, settle), admin (also nodes, revocations, operators). Written to `<home>/operators.json` by the daemon.',
  positionals: [{ name: 'name', description: 'the operator’s name (1..64 of a-z 0-9 . _ -)' }],
  flags: [
    {
      name: 'role',
      kind: 'string',
      value: '<viewer|operator|admin>',
      required: true,
      description: 'what the operator may do',
    },
    { name: 'key', kind: 'string', value: '<hex|file>', description: 'the operator’s Ed25519 public key' },
    { name: 'token', kind: 'boolean', description: 'make a bearer token instead (printed once)' },
  ],
  json: '{"operator": OperatorView, "token"?: string}',
  exits: EXITS_OPERATOR,
});

/** `heddle operator ls`. */
export const OPERATOR_LS: OperatorCommandDef = operatorDef({
  name: 'operator ls',
  summary: 'list the operators and their roles (admin)',
  description:
    'Every operator of `<home>/operators.json`: name, role, how they authenticate, and the public key of a key operator. The home’s api.token is always an admin and is not listed.',
  positionals: [],
  flags: [],
  json: '{"operators": OperatorView[]}',
  exits: EXITS_OPERATOR,
});

/** `heddle operator rm`. */
export const OPERATOR_RM: OperatorCommandDef = operatorDef({
  name: 'operator rm',
  summary: 'remove an operator (admin): their key or token stops working at once',
  description:
    'Removes the operator from `<home>/operators.json`; their next request is refused (`unknown_key` or `unknown_token`).',
  positionals: [{ name: 'name', description: 'the operator to remove' }],
  flags: [],
  json: '{"operator": OperatorView}',
  exits: EXITS_OPERATOR,
});

/** `heddle whoami`. */
export const WHOAMI: OperatorCommandDef = operatorDef({
  name: 'whoami',
  summary: 'show who the controller takes you for, and your role',
  description: 'Asks `GET /v1/whoami` with the credential in use (context, `$HEDDLE_ADDR` or the home).',
  positionals: [],
  flags: [],
  json: '{"name": string, "role": string, "via": "key"|"token", "key"?: hex}',
  exits: EXITS_OPERATOR,
});

/** The definitions of `heddle operator ...`. */
export const OPERATOR_DEFS: readonly OperatorCommandDef[] = [OPERATOR_ADD, OPERATOR_LS, OPERATOR_RM];

/** `heddle operator`: manage operators. */
export const OPERATOR_GROUP: OperatorGroupDef = {
  name: 'operator',
  summary: 'add, list and remove the operators who may use the API (admin)',
  subcommands: OPERATOR_DEFS,
};

/** `heddle context add`. */
export const CONTEXT_ADD: CommandDef = {
  name: 'context add',
  summary: 'remember how to reach a controller: its URL, pinned certificate and credential',
  positionals: [{ name: 'name', description: 'the context’s name' }],
  flags: [
    {
      name: 'url',
      kind: 'string',
      value: '<url>',
      required: true,
      description: 'https://host:port of the controller’s remote API',
    },
    {
      name: 'fingerprint',
      kind: 'string',
      value: 'sha256:<hex>',
      description: 'pin the server certificate (as the daemon’s listening line prints it)',
    },
    {
      name: 'key',
      kind: 'string',
      value: '<file>',
      description: 'sign requests with this operator key file',
    },
    {
      name: 'token-file',
      kind: 'string',
      value: '<file>',
      description: 'or send the bearer token in this file',
    },
    { name: 'use', kind: 'boolean', description: 'make it the current context' },
    { name: 'force', kind: 'boolean', description: 'replace a context of the same name' },
    JSON_FLAG,
  ],
};

/** `heddle context use`. */
export const CONTEXT_USE: CommandDef = {
  name: 'context use',
  summary: 'make a context the current one (`-` for none: back to the controller home)',
  positionals: [{ name: 'name', description: 'the context, or - for none' }],
  flags: [JSON_FLAG],
};

/** `heddle context ls`. */
export const CONTEXT_LS: CommandDef = {
  name: 'context ls',
  summary: 'list the contexts; the current one is marked',
  positionals: [],
  flags: [JSON_FLAG],
};

/** `heddle context rm`. */
export const CONTEXT_RM: CommandDef = {
  name: 'context rm',
  summary: 'forget a context',
  positionals: [{ name: 'name', description: 'the context to forget' }],
  flags: [JSON_FLAG],
};

/** `heddle context`: the contexts of this user (`~/.config/heddle/contexts.json`). */
export const CONTEXT_GROUP: CommandDef = {
  name: 'context',
  summary: 'name the controllers this CLI talks to, as kubectl contexts do',
  subcommands: [CONTEXT_ADD, CONTEXT_USE, CONTEXT_LS, CONTEXT_RM],
};
