import type { JsonValue } from '@heddle/envelope';
import { errorMessage } from '@heddle/envelope';
import { NETWORK_LEVELS, type NetworkLevel, NODE_TIERS, type NodeTier } from '@heddle/model';
import { z } from 'zod';
import { fastParseContext } from './context-fast.js';
import { ValidationError } from './errors.js';
import { zodIssues } from './issues.js';
import { costToBasisPoints, PACKAGE_TRUST_LEVELS, type PackageTrust } from './levels.js';
import { normalisePackageId } from './package-id.js';

/**
 * What the gate knows about one workload action: the workload, the node it would run on and what it
 * would be given. Built by the caller (host, controller) from verified facts, never from what a
 * package or node says about itself.
 */
export interface GateContext {
  /** The workload kind (`cog`, `inference`, ...): open vocabulary, matched by a rule's `kinds`. */
  readonly kind: string;
  /** How far the package's signature chain is trusted. */
  readonly package_trust: PackageTrust;
  /** The operator-assigned tier of the node. */
  readonly node_tier: NodeTier;
  /** The network the instance is given. */
  readonly network: NetworkLevel;
  /** Whether the instance is given operator secrets. */
  readonly secrets: boolean;
  /** Whether the workload runs under emulation (another CPU architecture). */
  readonly emulated: boolean;
  /** The accelerator the instance is given (`hailo8`, `cuda`, ...), absent when none. */
  readonly accelerator?: string;
  /** The share of the node the workload takes, 0..1 (evaluated in basis points, see `COST_SCALE`). */
  readonly resource_cost: number;
  /** The package id, checked against revoked package ids (lower-cased when it is 64 hex characters). */
  readonly package_id: string;
  /** The keys that signed the package (lower-case), checked against revoked signer keys. */
  readonly signer_keys: readonly string[];
  /** The hashes of the package's artifacts (lower-case), checked against revoked artifact hashes. */
  readonly artifact_hashes: readonly string[];
}

/** A reference (package id, key, hash, kind, accelerator): printable ASCII without spaces, 1..256 chars. */
export const referenceString: z.ZodString = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'longer than 256 characters')
  .regex(/^[\x21-\x7e]+$/, 'expected printable ASCII without spaces');

/**
 * Most references a context list may hold (signer keys, artifact hashes): a package has at most 1,024
 * files (`@heddle/package`'s limit), each an artifact hash, so every verifiable package fits.
 */
export const MAX_CONTEXT_REFS = 1024;

const lowerRefs = z
  .array(referenceString)
  .max(MAX_CONTEXT_REFS, `more than ${MAX_CONTEXT_REFS} entries`)
  .transform((a) => a.map((s) => s.toLowerCase()));

const RawContextSchema = z.strictObject({
  kind: referenceString,
  package_trust: z.enum(PACKAGE_TRUST_LEVELS),
  node_tier: z.enum(NODE_TIERS),
  network: z.enum(NETWORK_LEVELS),
  secrets: z.boolean(),
  emulated: z.boolean(),
  accelerator: referenceString.nullable().optional(),
  resource_cost: z.number().min(0, 'must be at least 0').max(1, 'must be at most 1'),
  package_id: referenceString.transform(normalisePackageId),
  signer_keys: lowerRefs.default([]),
  artifact_hashes: lowerRefs.default([]),
});

/**
 * Schema of a gate context. `accelerator` may be omitted or null (no accelerator); `signer_keys`
 * and `artifact_hashes` default to empty and are lower-cased. Unknown fields are refused.
 */
export const GateContextSchema: z.ZodType<GateContext> = RawContextSchema.transform((raw): GateContext => {
  const { accelerator, ...rest } = raw;
  return accelerator === null || accelerator === undefined ? rest : { ...rest, accelerator };
});

/** The outcome of {@link safeParseContext}. */
export type ContextParseResult =
  | { readonly ok: true; readonly context: GateContext }
  | { readonly ok: false; readonly error: ValidationError };

/**
 * Validates an untrusted context without throwing. Accepts the flat context or the reference host's
 * `{"workload": {...}}` wrapping.
 */
export function safeParseContext(input: unknown): ContextParseResult {
  let value = input;
  let prefix = '';
  if (isWrapped(value)) {
    value = value.workload;
    prefix = 'workload';
  }
  let r: ReturnType<typeof GateContextSchema.safeParse>;
  try {
    const fast = fastParseContext(value);
    if (fast !== undefined) return { ok: true, context: fast };
    r = GateContextSchema.safeParse(value);
  } catch (err) {
    // Hostile objects (throwing getters, proxies) end here rather than escaping as a crash.
    const issues = [{ field: prefix || '$', message: `unreadable: ${errorMessage(err)}` }];
    return { ok: false, error: new ValidationError('invalid_context', 'context', issues, { cause: err }) };
  }
  if (r.success) return { ok: true, context: r.data };
  return { ok: false, error: new ValidationError('invalid_context', 'context', zodIssues(r.error, prefix)) };
}

/** Validates an untrusted context; throws `ValidationError` (code `invalid_context`, naming the field). */
export function parseContext(input: unknown): GateContext {
  const r = safeParseContext(input);
  if (!r.ok) throw r.error;
  return r.context;
}

/**
 * The context as it is chained: canonical JSON holds integers only, so `resource_cost` is replaced by
 * `resource_cost_bp`, the cost in basis points (0..10000). The gate decides on that same rounded
 * value, so a decision replayed from the chain comes out the same.
 */
export function contextForChain(ctx: GateContext): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {
    kind: ctx.kind,
    package_trust: ctx.package_trust,
    node_tier: ctx.node_tier,
    network: ctx.network,
    secrets: ctx.secrets,
    emulated: ctx.emulated,
    resource_cost_bp: costToBasisPoints(ctx.resource_cost),
    package_id: ctx.package_id,
    signer_keys: [...ctx.signer_keys],
    artifact_hashes: [...ctx.artifact_hashes],
  };
  if (ctx.accelerator !== undefined) out.accelerator = ctx.accelerator;
  return out;
}

function isWrapped(v: unknown): v is { workload: unknown } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  try {
    const keys = Object.keys(v);
    return keys.length === 1 && keys[0] === 'workload';
  } catch {
    return false;
  }
}
