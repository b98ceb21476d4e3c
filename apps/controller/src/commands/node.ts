import { resolve } from 'node:path';
import { positional, requiredString } from '@heddle/cli-kit';
import type { NodeView } from '@heddle/control-plane';
import { NODE_TIERS, type NodeTier } from '@heddle/model';
import { ExitCode, usageError } from '../cli-error.js';
import { badValue, choiceFlag } from '../command-def.js';
import {
  NODE_ADD,
  NODE_ADD_SEED,
  NODE_CORDON,
  NODE_DRAIN,
  NODE_LABEL,
  NODE_LS,
  NODE_PIN,
  NODE_REFRESH,
  NODE_RM,
  NODE_UNCORDON,
} from '../defs/node.js';
import { type Paint, paintState } from '../format/colour.js';
import { age } from '../format/duration.js';
import { table } from '../format/table.js';
import type { CliIo } from '../io.js';
import { parseLabelWords } from '../label-args.js';
import { type OperatorContext, runOperator } from '../operator.js';

const USAGE =
  'usage: heddle node add|add-seed|ls|rm|pin|refresh|cordon|uncordon|drain|label ... (heddle node <sub> --help shows each)';

/** `heddle node add|ls|rm|pin|refresh`: manage the nodes the controller places on. */
export function node(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return runOperator(NODE_ADD, rest, io, nodeAdd);
    case 'add-seed':
      return runOperator(NODE_ADD_SEED, rest, io, async (ctx) => {
        const url = positional(ctx.parsed, 0);
        const spki = requiredString(ctx.parsed, 'pin-spki');
        if (!/^[0-9a-f]{64}$/.test(spki)) throw badValue('pin-spki', 'expected 64 lower-case hex characters');
        const node = await ctx.client().addSeed({
          url,
          spki,
          token_file: resolve(ctx.io.cwd, requiredString(ctx.parsed, 'token-file')),
          tier: requiredTier(ctx),
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
        const id = positional(ctx.parsed, 0);
        const n = await ctx.client().removeNode(id, { force: ctx.parsed.booleans.force === true });
        ctx.emit({ node: n }, () => [
          `removed ${n.node_id} (${n.url})${n.instances > 0 ? `; ${n.instances} placements on it are now marked lost (heddle ps --all)` : ''}`,
        ]);
        return ExitCode.ok;
      });
    case 'pin':
      return runOperator(NODE_PIN, rest, io, async (ctx) => {
        const id = positional(ctx.parsed, 0);
        const key = hexKey(requiredString(ctx.parsed, 'key'));
        const tier = tierFlag(ctx);
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
    case 'cordon':
    case 'uncordon':
      return runOperator(sub === 'cordon' ? NODE_CORDON : NODE_UNCORDON, rest, io, async (ctx) => {
        const id = positional(ctx.parsed, 0);
        const c = ctx.client();
        const n = sub === 'cordon' ? await c.cordonNode(id) : await c.uncordonNode(id);
        ctx.emit({ node: n }, () => [
          n.cordoned
            ? `cordoned ${n.node_id}: no new places go there (${n.instances} instances keep running; heddle node drain ${n.node_id} moves them)`
            : `uncordoned ${n.node_id}: it takes new places again`,
        ]);
        return ExitCode.ok;
      });
    case 'drain':
      return runOperator(NODE_DRAIN, rest, io, async (ctx) => {
        const r = await ctx.client().drainNode(positional(ctx.parsed, 0));
        ctx.emit(r, () => [
          `drained ${r.node_id} (cordoned): ${r.moved.length} moved, ${r.left.length} left`,
          ...r.moved.map((m) => `  moved ${m.instance_id} -> ${m.to_instance_id} on ${m.to_node_id}`),
          ...r.left.map(
            (l) =>
              `  ${ctx.paint(l.reason === 'failed' ? 'red' : 'yellow', 'left')} ${l.instance_id} (${l.reason}${l.alert_id === null ? '' : `, alert ${l.alert_id}`}): ${l.detail}`,
          ),
        ]);
        return r.left.some((l) => l.reason === 'failed') ? ExitCode.checkFailed : ExitCode.ok;
      });
    case 'label':
      return runOperator(NODE_LABEL, rest, io, async (ctx) => {
        const id = positional(ctx.parsed, 0);
        const change = parseLabelWords(ctx.parsed.positionals.slice(1));
        const n = await ctx.client().labelNode(id, change);
        ctx.emit({ node: n }, () => [`labels of ${n.node_id}: ${labelsCell(n.labels)}`]);
        return ExitCode.ok;
      });
    default:
      throw usageError(
        sub === undefined ? USAGE : `heddle node: unknown subcommand ${JSON.stringify(sub)}\n${USAGE}`,
      );
  }
}

async function nodeAdd(ctx: OperatorContext): Promise<number> {
  const url = positional(ctx.parsed, 0);
  const tier = requiredTier(ctx);
  const given = ctx.parsed.strings.key;
  const key = given === undefined ? undefined : hexKey(given);
  const n = await ctx.client().addNode(url, { tier, ...(key === undefined ? {} : { key }) });
  ctx.emit({ node: n }, () => [
    `added ${n.node_id} at ${n.url}: tier ${n.tier ?? '-'}, key ${n.public_key.slice(0, 16)}… (${n.key_source === 'tofu' ? 'trusted on first use' : 'pinned'}), routes ${n.routes.join(',') || '-'}`,
  ]);
  return ExitCode.ok;
}

/** `--tier`, when given: one of the trust tiers (else refused, exit 3). */
function tierFlag(ctx: OperatorContext): NodeTier | undefined {
  const v = ctx.parsed.strings.tier;
  return v === undefined ? undefined : choiceFlag('tier', v, NODE_TIERS);
}

/** `--tier` where the definition requires it (the parser refused the line without it). */
function requiredTier(ctx: OperatorContext): NodeTier {
  return choiceFlag('tier', requiredString(ctx.parsed, 'tier'), NODE_TIERS);
}

/** `--key`: a public key of 64 hex characters (else refused, exit 3), lower-cased. */
function hexKey(v: string): string {
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

/** The LABELS cell: `key=value,...` sorted by name, `-` for none. */
export function labelsCell(labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels).sort();
  return names.length === 0 ? '-' : names.map((k) => `${k}=${labels[k]}`).join(',');
}

/** A node answering with a clock off by more than this (ms) gets a line under the table. */
const CLOCK_NOTE_MS = 5_000;

/**
 * The `node ls` table, and a note under it for each suspended node, each node that fails its checks
 * (its last error), and each node that answers with a clock off by more than 5 s.
 */
export function nodeTable(nodes: readonly NodeView[], paint: Paint, now: number): string[] {
  if (nodes.length === 0) return ['no nodes (add one with heddle node add <ws-url> --tier <tier>)'];
  const rows = nodes.map((n) => [
    n.node_id,
    n.tier ?? paint('red', '-'),
    n.cordoned
      ? `${paintState(paint, n.liveness)},${paint('yellow', 'cordoned')}`
      : paintState(paint, n.liveness),
    softwareCell(n.software),
    n.routes.join(',') || '-',
    String(n.instances),
    labelsCell(n.labels),
    age(n.last_seen_ms, now),
    n.url,
  ]);
  const lines = table(
    ['NODE', 'TIER', 'LIVENESS', 'VERSION', 'ROUTES', 'INSTANCES', 'LABELS', 'SEEN', 'URL'],
    rows,
  );
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
    } else if (n.clock !== null && Math.abs(n.clock.offset_ms) > CLOCK_NOTE_MS) {
      // Answering, but its clock drifts: said before its calls are refused (docs/operator-guide.md 5.11a).
      const side = n.clock.offset_ms > 0 ? 'ahead of' : 'behind';
      lines.push(
        `${n.node_id}: clock ${(Math.abs(n.clock.offset_ms) / 1000).toFixed(1)} s ${side} this controller's (±${n.clock.error_ms} ms); fix its time (NTP), see heddle alerts`,
      );
    }
  }
  return lines;
}
