import { type OperatorCommandDef, type OperatorGroupDef, operatorDef } from '../command-def.js';

// The definitions of `heddle node ...`: what each parses, what its --help and the CLI reference
// (docs/cli-reference.md) say. Data only, so that help and completion load nothing else.

const EXITS_NODE = {
  0: 'done',
  1: 'the node or the controller refused or could not be reached (node_exists, key_mismatch, unreachable, controller_not_running)',
  2: 'usage error',
  3: 'bad input (invalid_input naming the field, unknown_node, unauthorized)',
  4: 'internal error',
} as const;

const KEY_FLAG = {
  name: 'key',
  kind: 'string',
  value: '<hex>',
  description: 'the node’s public key (64 hex characters)',
} as const;

/** `heddle node add`. */
export const NODE_ADD: OperatorCommandDef = operatorDef({
  name: 'node add',
  summary: 'learn a host by its signed describe and give it a trust tier',
  description:
    'The controller connects to the host at `<ws-url>`, checks its signed describe and binds trust to the key that answered (trust on first use), or only to --key when given. The tier is the operator’s: a node never assigns its own.',
  positionals: [{ name: 'ws-url', description: 'where the host listens (ws:// or wss://)' }],
  flags: [
    {
      name: 'tier',
      kind: 'string',
      value: '<discovered|paired|pinned>',
      required: true,
      description: 'the trust tier to give the node',
    },
    { ...KEY_FLAG, description: 'accept only this key (64 hex) instead of trusting the first answer' },
  ],
  json: '{"node": NodeView}',
  exits: EXITS_NODE,
});

/** `heddle node add-seed`. */
export const NODE_ADD_SEED: OperatorCommandDef = operatorDef({
  name: 'node add-seed',
  summary: 'register a Cognitum Seed, driven through its own HTTP API',
  description:
    'The controller reaches the Seed at `<url>` over HTTPS pinned to its certificate key (--pin-spki, the SHA-256 of its SubjectPublicKeyInfo, as `heddle-seed init` shows it), with the token of a paired client read from --token-file (pair first with `heddle-seed pair`). The Seed is placed onto with store-pinned cogs (`heddle place store:<id>@<version>`).',
  positionals: [
    { name: 'url', description: 'the Seed API (https://host:8443, or http://169.254.42.1 on the USB link)' },
  ],
  flags: [
    {
      name: 'pin-spki',
      kind: 'string',
      value: '<hex>',
      required: true,
      description: 'SHA-256 (64 hex) of the Seed certificate key',
    },
    {
      name: 'token-file',
      kind: 'string',
      value: '<file>',
      required: true,
      description: 'the paired token (mode 0600)',
    },
    {
      name: 'tier',
      kind: 'string',
      value: '<discovered|paired|pinned>',
      required: true,
      description: 'the trust tier to give the Seed',
    },
    {
      name: 'allow-plain-http',
      kind: 'boolean',
      description: 'allow http:// (only the USB link or loopback)',
    },
  ],
  json: '{"node": NodeView}',
  exits: EXITS_NODE,
});

/** `heddle node ls`. */
export const NODE_LS: OperatorCommandDef = operatorDef({
  name: 'node ls',
  summary: 'list the known nodes: tier, liveness, version, routes, instances',
  description:
    'One row per node: NODE, TIER (`-` while suspended because another key answered), LIVENESS, VERSION (the software version the host reported in its last describe: the version of a `heddle-host`, `<name>/<version>` of other software, `-` when none was reported, as by a Seed or a host that predates the report), ROUTES, INSTANCES (not unloaded), SEEN (since the last successful describe) and URL. Suspended nodes are listed again below the table with what to do.',
  positionals: [],
  flags: [],
  json: '{"nodes": NodeView[]}',
  exits: EXITS_NODE,
});

/** `heddle node rm`. */
export const NODE_RM: OperatorCommandDef = operatorDef({
  name: 'node rm',
  summary: 'forget a node (refused while it has placements, unless --force)',
  description:
    'Removes the node from the controller’s state. Nothing is sent to the node: its instances keep running there, and with --force the controller forgets them.',
  positionals: [{ name: 'id', description: 'the node id (32 hex, see heddle node ls)' }],
  flags: [{ name: 'force', kind: 'boolean', description: 'remove it even though it has placements' }],
  json: '{"node": NodeView} (the node as it was)',
  exits: EXITS_NODE,
});

/** `heddle node pin`. */
export const NODE_PIN: OperatorCommandDef = operatorDef({
  name: 'node pin',
  summary: 'pin a node’s key (after a key change) and optionally change its tier',
  description:
    'Binds trust to --key from now on. This is how a node whose address answered with another key gets a tier again: check the new key out of band, then pin it.',
  positionals: [{ name: 'id', description: 'the node id (32 hex, see heddle node ls)' }],
  flags: [
    { ...KEY_FLAG, required: true, description: 'the key to trust (64 hex)' },
    {
      name: 'tier',
      kind: 'string',
      value: '<discovered|paired|pinned>',
      description: 'a new trust tier (default: the one assigned before)',
    },
  ],
  json: '{"node": NodeView}',
  exits: EXITS_NODE,
});

/** `heddle node refresh`. */
export const NODE_REFRESH: OperatorCommandDef = operatorDef({
  name: 'node refresh',
  summary: 'describe every node again and list them',
  description:
    'Asks every known node for a fresh signed describe. A node that answers with another key than the bound one is suspended (no tier) until its key is pinned; one that does not answer is marked unreachable.',
  positionals: [],
  flags: [],
  json: '{"nodes": NodeView[]}',
  exits: EXITS_NODE,
});

/** The definitions of `heddle node ...`. */
export const NODE_DEFS: readonly OperatorCommandDef[] = [
  NODE_ADD,
  NODE_ADD_SEED,
  NODE_LS,
  NODE_RM,
  NODE_PIN,
  NODE_REFRESH,
];

/** `heddle node`: the group of the node subcommands. */
export const NODE_GROUP: OperatorGroupDef = {
  name: 'node',
  summary: 'add, list, remove, pin and refresh the nodes placed on',
  subcommands: NODE_DEFS,
};
