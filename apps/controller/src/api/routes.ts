import { isAbsolute } from 'node:path';
import {
  type ControlPlane,
  type PlaceOrderInput,
  PlaceOrderInputSchema,
  type RevocationPushReport,
  type TransferProgress,
} from '@heddle/control-plane';
import type { JsonValue } from '@heddle/envelope';
import { isGone, NODE_TIERS } from '@heddle/model';
import { type RevocationListFile, RevocationListFileSchema } from '@heddle/package';
import { addSeed } from '@heddle/seed-adapter/controller';
import { z } from 'zod';
import { validate } from './body.js';
import { ApiFailure } from './errors.js';
import type { ApiHealth } from './types.js';

/** What a route handler is given. */
export interface RouteContext {
  readonly plane: ControlPlane;
  /** Path parameters by name (`id`). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The parsed body (`{}` when empty). */
  readonly body: JsonValue;
  /** Told of package transfers (set for a streamed place). */
  readonly onProgress?: (p: TransferProgress) => void;
  /**
   * Applies a signed revocation list (the daemon keeps its own copy in step, then distributes it);
   * without it, `POST /v1/revocations` only distributes (`plane.pushRevocations`).
   */
  readonly applyRevocations?: (list: RevocationListFile) => Promise<RevocationPushReport>;
}

/** One route of the operator API. */
export interface Route {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Path segments after `/`; `:name` segments are parameters. */
  readonly path: readonly string[];
  /** Query parameters it accepts (anything else is `invalid_input`). */
  readonly query?: readonly string[];
  /** Answers with the NDJSON stream when asked to (`Accept: application/x-ndjson`). */
  readonly streams?: boolean;
  /** Validates the body before anything is answered (so that a stream never starts for bad input). */
  readonly check?: (body: JsonValue) => void;
  readonly handle: (ctx: RouteContext) => unknown;
}

const Hex64 = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'expected an Ed25519 public key as 64 lower-case hex characters');
const Tier = z.enum(NODE_TIERS, { error: `expected one of ${NODE_TIERS.join(', ')}` });
const AddNodeBody = z.strictObject({
  url: z.string().min(1, 'expected a ws:// or wss:// URL').max(2048),
  tier: Tier,
  key: Hex64.optional(),
});
const PinBody = z.strictObject({ key: Hex64, tier: Tier.optional() });
const AddSeedBody = z.strictObject({
  url: z
    .string()
    .regex(/^https?:\/\/[^\s]+$/, 'expected https://host[:port] (or http:// on the USB link)')
    .max(2048),
  spki: Hex64,
  token_file: z.string().min(1).max(4096),
  tier: Tier,
  allow_plain_http: z.boolean().optional(),
});
const EmptyBody = z.strictObject({});
const StopBody = z.strictObject({
  grace_ms: z.int('expected whole milliseconds').min(0).max(3_600_000).optional(),
});

function flag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  if (v === null || v === '0' || v === 'false') return false;
  if (v === '' || v === '1' || v === 'true') return true;
  throw new ApiFailure('invalid_input', `query ${name}: expected 1 or 0`, { field: name });
}

function lines(query: URLSearchParams): number | undefined {
  const v = query.get('lines');
  if (v === null) return undefined;
  const n = /^\d{1,5}$/.test(v) ? Number(v) : Number.NaN;
  if (!(n >= 1 && n <= 10_000)) {
    throw new ApiFailure(
      'invalid_input',
      `query lines: expected a whole number 1..10000, got ${JSON.stringify(v.slice(0, 32))}`,
      {
        field: 'lines',
      },
    );
  }
  return n;
}

/** The order of a place body (zod at the boundary; `package_dir` must be absolute). */
export function parsePlaceBody(body: JsonValue): PlaceOrderInput {
  const order = validate(PlaceOrderInputSchema, body, 'order');
  if (order.package_dir !== undefined && !isAbsolute(order.package_dir)) {
    throw new ApiFailure(
      'invalid_input',
      'order package_dir: expected an absolute path on the controller machine',
      {
        field: 'package_dir',
      },
    );
  }
  return order;
}

const id = (ctx: RouteContext): string => ctx.params.id ?? '';

/** The routes of the operator API (docs/operator-api.md, "Routes"). */
export const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: ['v1', 'health'],
    handle: ({ plane }): ApiHealth => ({
      controller: plane.nodeId,
      nodes: plane.nodes().length,
      instances: plane.instances().filter((p) => !isGone(p.state)).length,
      unsettled: plane.unsettled().length,
    }),
  },
  { method: 'GET', path: ['v1', 'nodes'], handle: ({ plane }) => ({ nodes: plane.nodes() }) },
  {
    method: 'POST',
    path: ['v1', 'nodes'],
    handle: async ({ plane, body }) => {
      const b = validate(AddNodeBody, body, 'body');
      return {
        node: await plane.addNode(b.url, { tier: b.tier, ...(b.key === undefined ? {} : { key: b.key }) }),
      };
    },
  },
  {
    method: 'POST',
    path: ['v1', 'nodes', 'seed'],
    handle: async ({ plane, body }) => {
      const b = validate(AddSeedBody, body, 'body');
      const node = await addSeed(plane, b.url, {
        tier: b.tier,
        spki: b.spki,
        tokenFile: b.token_file,
        ...(b.allow_plain_http === undefined ? {} : { allowPlainHttp: b.allow_plain_http }),
      });
      return { node };
    },
  },
  {
    method: 'POST',
    path: ['v1', 'nodes', 'refresh'],
    handle: async ({ plane, body }) => {
      validate(EmptyBody, body, 'body');
      return { nodes: await plane.refreshNodes() };
    },
  },
  { method: 'GET', path: ['v1', 'nodes', ':id'], handle: (ctx) => ({ node: ctx.plane.node(id(ctx)) }) },
  {
    method: 'DELETE',
    path: ['v1', 'nodes', ':id'],
    query: ['force'],
    handle: async (ctx) => ({ node: await ctx.plane.removeNode(id(ctx), flag(ctx.query, 'force')) }),
  },
  {
    method: 'POST',
    path: ['v1', 'nodes', ':id', 'pin'],
    handle: async (ctx) => {
      const b = validate(PinBody, ctx.body, 'body');
      return { node: await ctx.plane.pinNode(id(ctx), b.key, b.tier) };
    },
  },
  {
    method: 'POST',
    path: ['v1', 'place'],
    streams: true,
    check: (body) => {
      parsePlaceBody(body);
    },
    handle: ({ plane, body, onProgress }) =>
      plane.place(parsePlaceBody(body), onProgress === undefined ? {} : { onProgress }),
  },
  { method: 'GET', path: ['v1', 'instances'], handle: ({ plane }) => ({ instances: plane.instances() }) },
  { method: 'GET', path: ['v1', 'instances', ':id'], handle: (ctx) => ctx.plane.status(id(ctx)) },
  {
    method: 'GET',
    path: ['v1', 'instances', ':id', 'logs'],
    query: ['lines'],
    handle: (ctx) => ctx.plane.logs(id(ctx), lines(ctx.query)),
  },
  {
    method: 'POST',
    path: ['v1', 'instances', ':id', 'start'],
    handle: async (ctx) => {
      validate(EmptyBody, ctx.body, 'body');
      return { placement: await ctx.plane.start(id(ctx)) };
    },
  },
  {
    method: 'POST',
    path: ['v1', 'instances', ':id', 'stop'],
    handle: (ctx) => ctx.plane.stop(id(ctx), validate(StopBody, ctx.body, 'body').grace_ms),
  },
  {
    method: 'POST',
    path: ['v1', 'instances', ':id', 'unload'],
    handle: async (ctx) => {
      validate(EmptyBody, ctx.body, 'body');
      return { placement: await ctx.plane.unload(id(ctx)) };
    },
  },
  {
    method: 'GET',
    path: ['v1', 'alerts'],
    query: ['unacknowledged'],
    handle: (ctx) => ({ alerts: ctx.plane.alerts({ unacknowledged: flag(ctx.query, 'unacknowledged') }) }),
  },
  {
    method: 'POST',
    path: ['v1', 'alerts', ':id', 'ack'],
    handle: async (ctx) => {
      validate(EmptyBody, ctx.body, 'body');
      return { alert: await ctx.plane.ackAlert(id(ctx)) };
    },
  },
  { method: 'GET', path: ['v1', 'revocations'], handle: ({ plane }) => plane.revocationStatus() },
  {
    method: 'POST',
    path: ['v1', 'revocations'],
    handle: (ctx) => {
      const list = validate(RevocationListFileSchema, ctx.body, 'list');
      return ctx.applyRevocations === undefined
        ? ctx.plane.pushRevocations(list)
        : ctx.applyRevocations(list);
    },
  },
  { method: 'GET', path: ['v1', 'unsettled'], handle: ({ plane }) => ({ unsettled: plane.unsettled() }) },
  {
    method: 'POST',
    path: ['v1', 'settle'],
    handle: (ctx) => {
      validate(EmptyBody, ctx.body, 'body');
      return ctx.plane.settle();
    },
  },
];

/** The route for `method` and `segments`, with its parameters; `methods` lists what the path allows when the method does not match. */
export function matchRoute(
  method: string,
  segments: readonly string[],
): { route: Route; params: Record<string, string> } | { route: undefined; methods: string[] } {
  const methods: string[] = [];
  for (const route of ROUTES) {
    if (route.path.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < route.path.length && ok; i++) {
      const p = route.path[i] as string;
      const s = segments[i] as string;
      if (p.startsWith(':')) {
        // A literal segment of another route wins (`/v1/nodes/refresh` is not node "refresh").
        if (s === '' || ROUTES.some((r) => r.path.length === route.path.length && r.path[i] === s))
          ok = false;
        else params[p.slice(1)] = s;
      } else if (p !== s) ok = false;
    }
    if (!ok) continue;
    if (route.method === method) return { route, params };
    methods.push(route.method);
  }
  return { route: undefined, methods };
}
