import { resolve } from 'node:path';
import type { NodeView } from '@heddle/control-plane';
import { NODE_TIERS, type NodeTier } from '@heddle/model';
import { ExitCode, usageError } from '../cli-error.js';
import { badValue, type CommandDef, choiceFlag, synopsis } from '../command-def.js';
import { type Paint, paintState } from '../format/colour.js';
import { age } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { type OperatorContext, runOperator } from '../operator.js';

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
export const NODE_ADD: CommandDef = {
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
};

/** `heddle node add-seed`. */
export const NODE_ADD_SEED: CommandDef = {
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
};

/** `heddle node ls`. */
export const NODE_LS: CommandDef = {
  name: 'node ls',
  summary: 'list the known nodes: tier, liveness, version, routes, instances',
  description:
    'One row per node: NODE, TIER (`-` while suspended because another key answered), LIVENESS, VERSION (the software version the host reported in its last describe: the version of a `heddle-host`, `<name>/<version>` of other software, `-` when none was reported, as by a Seed or a host that predates the report), ROUTES, INSTANCES (not unloaded), SEEN (since the last successful describe) and URL. Suspended nodes are listed again below the table with what to do.',
  positionals: [],
  flags: [],
  json: '{"nodes": NodeView[]}',
  exits: EXITS_NODE,
};

/** `heddle node rm`. */
export const NODE_RM: CommandDef = {
  name: 'node rm',
  summary: 'forget a node (refused while it has placements, unless --force)',
  description:
    'Removes the node from the controller’s state. Nothing is sent to the node: its instances keep running there, and with --force the controller forgets them.',
  positionals: [{ name: 'id', description: 'the node id (32 hex, see heddle node ls)' }],
  flags: [{ name: 'force', kind: 'boolean', description: 'remove it even though it has placements' }],
  json: '{"node": NodeView} (the node as it was)',
  exits: EXITS_NODE,
};

/** `heddle node pin`. */
export const NODE_PIN: CommandDef = {
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
};

/** `heddle node refresh`. */
export const NODE_REFRESH: CommandDef = {
  name: 'node refresh',
  summary: 'describe every node again and list them',
  description:
    'Asks every known node for a fresh signed describe. A node that answers with another key than the bound one is suspended (no tier) until its key is pinned; one that does not answer is marked unreachable.',
  positionals: [],
  flags: [],
  json: '{"nodes": NodeView[]}',
  exits: EXITS_NODE,
};

/** The definitions of `heddle node ...`. */
export const NODE_DEFS: readonly CommandDef[] = [
  NODE_ADD,
  NODE_ADD_SEED,
  NODE_LS,
  NODE_RM,
  NODE_PIN,
  NODE_REFRESH,
];

const USAGE = 'usage: heddle node add|add-seed|ls|rm|pin|refresh ... (heddle node <sub> --help shows each)';

/** `heddle node add|ls|rm|pin|refresh`: manage the nodes the controller places on. */
export function node(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return runOperator(NODE_ADD, rest, io, nodeAdd);
    case 'add-seed':
      return runOperator(NODE_ADD_SEED, rest, io, async (ctx) => {
        const [url] = ctx.parsed.positionals as [string];
        const spki = ctx.parsed.strings['pin-spki'] as string;
        if (!/^[0-9a-f]{64}$/.test(spki)) throw badValue('pin-spki', 'expected 64 lower-case hex characters');
        const node = await ctx.client().addSeed({
          url,
          spki,
          token_file: resolve(ctx.io.cwd, ctx.parsed.strings['token-file'] as string),
          tier: tierFlag(ctx, true) as NodeTier,
          ...(ctx.parsed.booleans['allow-plain-http'] === true ? { allow_plain_http: true } : {}),
        });
        ctx.emit({ node }, () => [`added Seed ${node.node_id} (${node.url}) as ${node.tier}`]);
        return ExitCode.ok;
      });
    case 'ls':
    case 'list':
      return runOperator(NODE_LS, rest, io, async (ctx) => {
        const nodes = await ctx.client().nodes();
        ctx.emit({ nodes }, () => nodeTable(nodes, ctx.paint, ctx.now()));
        return ExitCode.ok;
      });
    case 'rm':
    case 'remove':
      return runOperator(NODE_RM, rest, io, async (ctx) => {
        const [id] = ctx.parsed.positionals as [string];
        const n = await ctx.client().removeNode(id, { force: ctx.parsed.booleans.force === true });
        ctx.emit({ node: n }, () => [
          `removed ${n.node_id} (${n.url})${n.instances > 0 ? `; ${n.instances} placements on it are now marked lost (heddle ps --all)` : ''}`,
        ]);
        return ExitCode.ok;
      });
    case 'pin':
      return runOperator(NODE_PIN, rest, io, async (ctx) => {
        const [id] = ctx.parsed.positionals as [string];
        const key = keyFlag(ctx, true) as string;
        const tier = tierFlag(ctx, false);
        const n = await ctx.client().pinNode(id, key, tier);
        ctx.emit({ node: n }, () => [`pinned ${n.node_id}: key ${n.public_key}, tier ${n.tier ?? '-'}`]);
        return ExitCode.ok;
      });
    case 'refresh':
      return runOperator(NODE_REFRESH, rest, io, async (ctx) => {
        const nodes = await ctx.client().refreshNodes();
        ctx.emit({ nodes }, () => nodeTable(nodes, ctx.paint, ctx.now()));
        return ExitCode.ok;
      });
    default:
      throw usageError(
        sub === undefined ? USAGE : `heddle node: unknown subcommand ${JSON.stringify(sub)}\n${USAGE}`,
      );
  }
}

async function nodeAdd(ctx: OperatorContext): Promise<number> {
  const [url] = ctx.parsed.positionals as [string];
  const tier = tierFlag(ctx, true) as NodeTier;
  const key = keyFlag(ctx, false);
  const n = await ctx.client().addNode(url, { tier, ...(key === undefined ? {} : { key }) });
  ctx.emit({ node: n }, () => [
    `added ${n.node_id} at ${n.url}: tier ${n.tier ?? '-'}, key ${n.public_key.slice(0, 16)}… (${n.key_source === 'tofu' ? 'trusted on first use' : 'pinned'}), routes ${n.routes.join(',') || '-'}`,
  ]);
  return ExitCode.ok;
}

function tierFlag(ctx: OperatorContext, required: boolean): NodeTier | undefined {
  const v = ctx.parsed.strings.tier;
  if (v === undefined) {
    if (required)
      throw usageError(`--tier is required (${NODE_TIERS.join(', ')})\nusage: ${synopsis(ctx.def)}`, 'tier');
    return undefined;
  }
  return choiceFlag('tier', v, NODE_TIERS);
}

function keyFlag(ctx: OperatorContext, required: boolean): string | undefined {
  const v = ctx.parsed.strings.key;
  if (v === undefined) {
    if (required) throw usageError(`--key <hex> is required\nusage: ${synopsis(ctx.def)}`, 'key');
    return undefined;
  }
  if (!/^[0-9a-fA-F]{64}$/.test(v)) {
    throw badValue('key', `--key: expected a public key of 64 hex characters, got ${v.length} characters`);
  }
  return v.toLowerCase();
}

/**
 * The VERSION cell: the version a `heddle-host` reports, `<name>/<version>` for other software, `-`
 * when the node reported none (an older host, a Seed).
 */
export function softwareCell(software: NodeView['software']): string {
  if (software === null) return '-';
  return software.name === 'heddle-host' ? software.version : `${software.name}/${software.version}`;
}

/** The `node ls` table, and a note under it for each suspended node. */
export function nodeTable(nodes: readonly NodeView[], paint: Paint, now: number): string[] {
  if (nodes.length === 0) return ['no nodes (add one with heddle node add <ws-url> --tier <tier>)'];
  const rows = nodes.map((n) => [
    n.node_id,
    n.tier ?? paint('red', '-'),
    paintState(paint, n.liveness),
    softwareCell(n.software),
    n.routes.join(',') || '-',
    String(n.instances),
    age(n.last_seen_ms, now),
    n.url,
  ]);
  const lines = table(['NODE', 'TIER', 'LIVENESS', 'VERSION', 'ROUTES', 'INSTANCES', 'SEEN', 'URL'], rows);
  for (const n of nodes) {
    if (n.tier === null && n.pending_key === null && n.last_error !== null) {
      lines.push(`${n.node_id}: ${n.last_error}; remove it with heddle node rm ${n.node_id} --force`);
    } else if (n.tier === null) {
      lines.push(
        `${n.node_id}: suspended, another key answered (${n.pending_key ?? 'unknown'}); if it is expected: heddle node pin ${n.node_id} --key ${n.pending_key ?? '<hex>'}`,
      );
    } else if (
      n.last_error !== null &&
      // A Seed that answers but refuses the token (SEED_TOKEN_REFUSED of @heddle/control-plane).
      (n.liveness !== 'alive' || n.last_error.startsWith('token refused:'))
    ) {
      lines.push(`${n.node_id}: ${n.last_error}`);
    }
  }
  return lines;
}
