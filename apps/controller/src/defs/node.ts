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

const NODE_ID_ARG = [{ name: 'id', description: 'the node id (32 hex, see heddle node ls)' }] as const;

/** `heddle node cordon`. */
export const NODE_CORDON: OperatorCommandDef = operatorDef({
  name: 'node cordon',
  summary: 'take no new places on a node (what runs there keeps running)',
  description:
    'The placement engine rejects a cordoned node with the constraint `cordoned` (heddle place --explain shows it), a --node pin included. Stored, chained (workload.node) and kept across controller restarts; node ls shows CORDONED.',
  positionals: NODE_ID_ARG,
  flags: [],
  json: '{"node": NodeView}',
  exits: EXITS_NODE,
});

/** `heddle node uncordon`. */
export const NODE_UNCORDON: OperatorCommandDef = operatorDef({
  name: 'node uncordon',
  summary: 'let a cordoned node take new places again',
  description: 'Lifts the cordon (stored and chained). Nothing moves back by itself.',
  positionals: NODE_ID_ARG,
  flags: [],
  json: '{"node": NodeView}',
  exits: EXITS_NODE,
});

/** `heddle node drain`. */
export const NODE_DRAIN: OperatorCommandDef = operatorDef({
  name: 'node drain',
  summary: 'cordon a node and move its instances elsewhere',
  description:
    'Cordons the node, then places each instance still there again on another node through the gate and the engine (its order, with this node avoided: a chained decision and attempts, then a chained workload.migrate naming both instances), and stops and unloads the old one once the new one is placed. An instance that may not move (placed with --no-migrate, a Seed store cog, or pinned to the node with --node) is left there and an alert naming it is raised (heddle alerts). One that no node takes is left and reported; drain again to retry it. Prints each move and each instance left.',
  positionals: NODE_ID_ARG,
  flags: [],
  json: '{"node_id", "cordoned": true, "moved": [{instance_id, to_instance_id, to_node_id, decision_id}], "left": [{instance_id, reason, detail, alert_id}]}',
  exits: {
    ...EXITS_NODE,
    1: 'an instance that should have moved was left (no node took it, or the old one could not be taken down), or the controller is not running',
  },
});

/** `heddle node label`. */
export const NODE_LABEL: OperatorCommandDef = operatorDef({
  name: 'node label',
  summary: 'set or remove labels of a node (key=value, key-)',
  description:
    'Each `key=value` sets a label, each `key-` removes one (as kubectl label). Names are 1..63 of a-z 0-9 . _ - (starting with a letter or digit); values at most 255 printable ASCII characters without space, `=` or `,`; at most 64 labels per node. Stored, chained (workload.node) and kept across restarts; node ls shows them. Labels are what heddle place --constraint label.<name>=<value> requires and --spread <name> spreads over.',
  positionals: [
    ...NODE_ID_ARG,
    { name: 'label', variadic: true, description: 'key=value to set, key- to remove' },
  ],
  flags: [],
  json: '{"node": NodeView}',
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
  NODE_CORDON,
  NODE_UNCORDON,
  NODE_DRAIN,
  NODE_LABEL,
];

/** `heddle node`: the group of the node subcommands. */
export const NODE_GROUP: OperatorGroupDef = {
  name: 'node',
  summary: 'add, list, remove, pin, refresh, cordon, drain and label the nodes placed on',
  subcommands: NODE_DEFS,
};
