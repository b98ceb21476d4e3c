import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { ControlPlane, NodeView } from '@heddle/control-plane';
import { type PlaneContext, PlaneError, type TargetRecord } from '@heddle/control-plane/driver';
import { NODE_TIERS, type NodeTier } from '@heddle/model';
import { z } from 'zod';
import { loadToken } from '../credentials.js';
import { SeedError } from '../errors.js';
import { seedClient, seedNodeId } from './seed-nodes.js';

/** The kind of a Cognitum Seed node (`TargetRecord.kind`). */
export const SEED_NODE_KIND = 'seed';

/** How to register a Cognitum Seed. */
export interface AddSeedOptions {
  readonly tier: NodeTier;
  /** SHA-256 (hex) of the Seed certificate's SubjectPublicKeyInfo. */
  readonly spki: string;
  /** The file holding the paired token (mode 0600). */
  readonly tokenFile: string;
  /** Allow plain HTTP (the USB link or loopback only). */
  readonly allowPlainHttp?: boolean | undefined;
}

/** Schema of {@link AddSeedOptions}. */
export const AddSeedOptionsSchema: z.ZodType<AddSeedOptions> = z.strictObject({
  tier: z.enum(NODE_TIERS),
  spki: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters (SHA-256 of the Seed certificate key)'),
  tokenFile: z.string().min(1).max(4096),
  allowPlainHttp: z.boolean().optional(),
});

/**
 * Asks a Seed its status and installed list, and checks the token with a call the Seed authenticates
 * (`SeedClient.verifyToken`: its reads are served without a token, so they prove nothing about it); a
 * failure as a plane error (a token the Seed refuses is `refused`, naming `heddle-seed pair`).
 */
export async function probeSeed(t: TargetRecord, checkToken = true): Promise<void> {
  try {
    const client = seedClient(t);
    await client.status();
    await client.installed();
    if (checkToken) await client.verifyToken();
  } catch (err) {
    throw seedFailure(err, t.url);
  }
}

/**
 * The tokens a Seed refused, per node and token file: a SHA-256 of the token, never the token. The
 * Seed blocks an address for 5 minutes after 3 auth failures, so a refused token is not sent again
 * on every refresh (which would keep the controller's address, and every tool beside it, blocked);
 * it is checked again once the file holds another token.
 */
const refusedTokens = new Map<string, string>();

/** The key and the token's fingerprint for {@link refusedTokens}; undefined when the file is unreadable. */
function tokenFingerprint(t: TargetRecord): { key: string; hash: string } | undefined {
  const file = t.seed?.token_file;
  if (file === undefined) return undefined;
  try {
    const hash = createHash('sha256').update(loadToken(file)).digest('hex');
    return { key: `${t.node_id}\0${file}`, hash };
  } catch {
    return undefined;
  }
}

/** The start of `last_error` of a Seed that answers but refuses the controller's token. */
export const SEED_TOKEN_REFUSED = 'token refused:';

/** A Seed client error as a plane error: a certificate that is not the pinned one is `key_mismatch`. */
export function seedFailure(err: unknown, url: string): PlaneError {
  if (err instanceof PlaneError) return err;
  const code = err instanceof SeedError ? err.code : 'unreachable';
  const text = err instanceof Error ? err.message : String(err);
  const message = text.startsWith(url) ? text : `${url}: ${text}`;
  switch (code) {
    case 'tls_pin':
      return new PlaneError('key_mismatch', message, { field: 'spki', cause: err });
    case 'credentials':
    case 'insecure':
    case 'invalid_argument':
      return new PlaneError('invalid_input', message, {
        field: code === 'credentials' ? 'token_file' : 'url',
        cause: err,
      });
    case 'not_paired':
      return new PlaneError('refused', `${message} (pair it first: heddle-seed pair)`, { cause: err });
    case 'seed_error':
    case 'bad_answer':
      return new PlaneError('refused', message, { cause: err });
    default:
      return new PlaneError('unreachable', message, { cause: err });
  }
}

/** `options` as {@link AddSeedOptions}; `invalid_input` naming the field otherwise. */
export function parseAddSeedOptions(options: unknown): AddSeedOptions {
  const r = AddSeedOptionsSchema.safeParse(options);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path =
    issue === undefined
      ? []
      : issue.code === 'unrecognized_keys'
        ? [...issue.path, issue.keys[0] ?? '']
        : issue.path;
  const field = path.length === 0 ? '$' : path.join('.');
  throw new PlaneError('invalid_input', `${field}: ${issue?.message ?? 'invalid'}`, { field });
}

/**
 * Registers a Cognitum Seed at `url` (docs/seed.md, "Under a controller"): TLS pinned to `spki`, the
 * paired token read from `tokenFile`. The Seed must answer its status and, with the token, its
 * installed list (a Seed that does not accept the token is refused: pair it first with `heddle-seed
 * pair`). Its node id is derived from the pin; it is recorded as kind {@link SEED_NODE_KIND} and
 * placed onto with store-pinned cogs only. `options` are parsed ({@link AddSeedOptionsSchema}).
 */
export async function addSeedTarget(ctx: PlaneContext, url: string, input: unknown): Promise<TargetRecord> {
  const options = parseAddSeedOptions(input);
  const now = ctx.now();
  const nodeId = seedNodeId(options.spki);
  const held = ctx.store.getTarget(nodeId);
  const draft: TargetRecord = {
    kind: SEED_NODE_KIND,
    node_id: nodeId,
    url,
    public_key: options.spki,
    key_source: 'pinned',
    tier: options.tier,
    assigned_tier: options.tier,
    pending_key: null,
    routes: ['remote.api'],
    facts: null,
    learned_at_ms: held?.learned_at_ms ?? now,
    last_seen_ms: now,
    unreachable_since_ms: null,
    last_error: null,
    seed: {
      spki: options.spki,
      token_file: resolve(options.tokenFile),
      allow_plain_http: options.allowPlainHttp ?? false,
    },
  };
  await probeSeed(draft);
  ctx.store.putTarget(draft);
  ctx.book.contact(nodeId);
  return draft;
}

/**
 * Asks a Seed again (status, installed list, token); a failure marks it unreachable with the reason,
 * except a token the Seed refuses: then it stays alive with `last_error` starting {@link SEED_TOKEN_REFUSED}.
 */
export async function refreshSeedTarget(ctx: PlaneContext, t: TargetRecord): Promise<TargetRecord> {
  const { store } = ctx;
  const liveness = ctx.book.liveness;
  const now = ctx.now();
  const fp = tokenFingerprint(t);
  const knownRefused = fp !== undefined && refusedTokens.get(fp.key) === fp.hash;
  const refusedRecord = (): TargetRecord => ({
    ...t,
    last_seen_ms: now,
    unreachable_since_ms: null,
    last_error: `${SEED_TOKEN_REFUSED} the Seed no longer accepts the token in ${t.seed?.token_file ?? 'its token file'} (revoked or replaced on the Seed); pair again (heddle-seed pair) and add it again (heddle node add-seed)`,
  });
  try {
    await probeSeed(t, !knownRefused);
    if (knownRefused) {
      // It answers; the token it refused is still the one in the file (not sent again).
      const next = refusedRecord();
      store.putTarget(next);
      liveness.contact(t.node_id, now);
      return next;
    }
    if (fp !== undefined) refusedTokens.delete(fp.key);
    const next: TargetRecord = { ...t, last_seen_ms: now, unreachable_since_ms: null, last_error: null };
    store.putTarget(next);
    liveness.contact(t.node_id, now);
    return next;
  } catch (err) {
    if (err instanceof PlaneError && err.cause instanceof SeedError && err.cause.code === 'not_paired') {
      // It answers (alive), but refuses the token (revoked on the Seed, or re-paired elsewhere): the
      // controller can no longer drive it. Shown by `node ls` until the token is replaced.
      if (fp !== undefined) refusedTokens.set(fp.key, fp.hash);
      const next = refusedRecord();
      store.putTarget(next);
      liveness.contact(t.node_id, now);
      return next;
    }
    const next: TargetRecord = {
      ...t,
      unreachable_since_ms: t.unreachable_since_ms ?? now,
      last_error: (err instanceof Error ? err.message : String(err)).slice(0, 512),
    };
    store.putTarget(next);
    liveness.failure(t.node_id, now);
    return next;
  }
}

/**
 * Registers the Cognitum Seed at `url` with `plane` (whose drivers include the Seed's, see
 * `seedDriver`): `plane.addNodeOf('seed', url, options)`, typed.
 */
export function addSeed(
  plane: Pick<ControlPlane, 'addNodeOf'>,
  url: string,
  options: AddSeedOptions,
): Promise<NodeView> {
  return plane.addNodeOf(SEED_NODE_KIND, url, options);
}
