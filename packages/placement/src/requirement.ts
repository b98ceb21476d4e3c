import { z } from 'zod';
import {
  AttrKeySchema,
  type AttrScalar,
  type AttrValue,
  AttrValueSchema,
  type Capability,
  CapabilityIdSchema,
} from './capability.js';
import { parseOrThrow } from './parse.js';
import { idHasPrefix, PROVENANCES, type Provenance, provenanceRank } from './vocabulary.js';

/** Predicate operators: equality, numeric bounds, membership in a list, list contains a value. */
export const PREDICATE_OPS: readonly ['eq', 'gte', 'lte', 'in', 'has'] = ['eq', 'gte', 'lte', 'in', 'has'];
/** One of {@link PREDICATE_OPS}. */
export type PredicateOp = (typeof PREDICATE_OPS)[number];

/**
 * A condition on one attribute of a capability:
 * - `eq`: the attribute equals `value` (lists compare element by element);
 * - `gte` / `lte`: the attribute and `value` are integers and compare so;
 * - `in`: `value` is a list and the (scalar) attribute is one of its elements;
 * - `has`: the attribute is a list containing `value` (a scalar).
 * A missing attribute fails every predicate.
 */
export interface Predicate {
  /** Attribute name. */
  readonly attr: string;
  /** Operator. */
  readonly op: PredicateOp;
  /** Operand. */
  readonly value: AttrValue;
}

/**
 * What a workload needs from a node: `count` capabilities matching `id` exactly or `id_prefix` on a
 * segment boundary, each satisfying every `where` predicate, known at least as `min_provenance`,
 * usable in their state, and, when `exclusive`, held by this workload alone.
 */
export interface Requirement {
  /** Exact capability id (exactly one of `id` and `id_prefix`). */
  readonly id?: string;
  /** Capability id prefix on a segment boundary. */
  readonly id_prefix?: string;
  /** Predicates every matched capability satisfies (all of them). */
  readonly where?: readonly Predicate[];
  /** How many distinct capabilities must match (default 1). */
  readonly count?: number;
  /** The workload needs the matched capabilities to itself. */
  readonly exclusive?: boolean;
  /** Weakest acceptable provenance (default `claimed`). */
  readonly min_provenance?: Provenance;
}

/** Why a requirement failed on a node, in the order a capability is checked. */
export const REQUIREMENT_REASONS = [
  'no_such_id',
  'provenance_too_low',
  'predicate_failed',
  'unavailable',
  'insufficient_count',
  'contended',
] as const;
/** One of {@link REQUIREMENT_REASONS}. */
export type RequirementReason = (typeof REQUIREMENT_REASONS)[number];

/** Schema of a {@link Predicate}, with the operand's form checked against the operator. */
export const PredicateSchema: z.ZodType<Predicate> = z
  .strictObject({ attr: AttrKeySchema, op: z.enum(PREDICATE_OPS), value: AttrValueSchema })
  .superRefine((p, ctx) => {
    const list = Array.isArray(p.value);
    const bad = (message: string): void => {
      ctx.addIssue({ code: 'custom', path: ['value'], message });
    };
    if ((p.op === 'gte' || p.op === 'lte') && typeof p.value !== 'number') bad(`${p.op} needs an integer`);
    if (p.op === 'in' && !list) bad('in needs a list');
    if (p.op === 'has' && list) bad('has needs a scalar');
  });

/** Largest `count` a requirement may ask for. */
export const MAX_REQUIREMENT_COUNT = 64;

/** Schema of a {@link Requirement}: exactly one of `id` and `id_prefix`; unknown fields refused. */
export const RequirementSchema: z.ZodType<Requirement> = z
  .strictObject({
    id: CapabilityIdSchema.exactOptional(),
    id_prefix: CapabilityIdSchema.exactOptional(),
    where: z.array(PredicateSchema).max(32).exactOptional(),
    count: z.int().min(1).max(MAX_REQUIREMENT_COUNT).exactOptional(),
    exclusive: z.boolean().exactOptional(),
    min_provenance: z.enum(PROVENANCES).exactOptional(),
  })
  .superRefine((r, ctx) => {
    if ((r.id === undefined) === (r.id_prefix === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'exactly one of id and id_prefix is required' });
    }
  });

/** Parses a requirement from untrusted input; throws `invalid_requirement` naming the field. */
export function parseRequirement(input: unknown): Requirement {
  return parseOrThrow(RequirementSchema, input, 'invalid_requirement', 'requirement');
}

/** The capabilities of one node, as the matcher reads them. */
export interface CapabilitySet {
  /** Every capability. */
  readonly caps: readonly Capability[];
  /** The same, by id. */
  readonly capById: ReadonlyMap<string, Capability>;
}

function scalarEq(a: AttrScalar, b: AttrScalar): boolean {
  return a === b;
}

function valueEq(a: AttrValue, b: AttrValue): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    // cast: the index is within bounds (noUncheckedIndexedAccess types it as possibly undefined)
    for (let i = 0; i < a.length; i++) if (!scalarEq(a[i] as AttrScalar, b[i] as AttrScalar)) return false;
    return true;
  }
  return a === b;
}

/** True when capability `cap` satisfies predicate `p`. */
export function predicateHolds(cap: Capability, p: Predicate): boolean {
  const v = cap.attrs[p.attr];
  if (v === undefined) return false;
  switch (p.op) {
    case 'eq':
      return valueEq(v, p.value);
    case 'gte':
      return typeof v === 'number' && typeof p.value === 'number' && v >= p.value;
    case 'lte':
      return typeof v === 'number' && typeof p.value === 'number' && v <= p.value;
    case 'in':
      return (
        !Array.isArray(v) &&
        Array.isArray(p.value) &&
        // cast: both checked just above: p.value an array of scalars, v not an array
        (p.value as readonly AttrScalar[]).includes(v as AttrScalar)
      );
    case 'has':
      return (
        Array.isArray(v) &&
        !Array.isArray(p.value) &&
        // cast: both checked just above: v an array of scalars, p.value not an array
        (v as readonly AttrScalar[]).includes(p.value as AttrScalar)
      );
  }
}

/** Stage a capability reaches: 0 id, 1 provenance, 2 predicates, 3 state, 4 not held by another. */
function stageOf(
  cap: Capability,
  req: Requirement,
  minRank: number,
  claims: ReadonlySet<string> | undefined,
): number {
  if (provenanceRank(cap.provenance) < minRank) return 0;
  const where = req.where;
  if (where !== undefined)
    for (let i = 0; i < where.length; i++) if (!predicateHolds(cap, where[i]!)) return 1;
  const exclusive = req.exclusive === true || cap.exclusive;
  if (cap.state === 'reserved' || (cap.state === 'busy' && exclusive)) return 2;
  if (claims?.has(cap.id)) return 3;
  return 4;
}

/**
 * Checks requirement `req` against a node's capabilities. `claims` holds the capability ids other
 * workloads already hold exclusively on that node (from reservations). Returns `null` when it is met,
 * otherwise the reason: the stage at which no candidate capability was left (`no_such_id`,
 * `provenance_too_low`, `predicate_failed`, `unavailable`, `contended`), or `insufficient_count` /
 * `contended` when some survived but fewer than `count`. When `out` is given and the requirement is
 * met, the ids of the first `count` matching capabilities are appended to it.
 */
export function checkRequirement(
  req: Requirement,
  node: CapabilitySet,
  claims?: ReadonlySet<string>,
  out?: string[],
): RequirementReason | null {
  const need = req.count ?? 1;
  const minRank = req.min_provenance === undefined ? 0 : provenanceRank(req.min_provenance);
  // Counts of capabilities reaching each stage (no closure: this runs for every node evaluated).
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let s4 = 0;
  const single = req.id !== undefined ? node.capById.get(req.id) : undefined;
  const prefix = req.id_prefix;
  const caps = node.caps;
  const n = req.id !== undefined ? (single === undefined ? 0 : 1) : caps.length;
  for (let i = 0; i < n; i++) {
    const cap = single ?? caps[i]!;
    if (prefix !== undefined && !idHasPrefix(cap.id, prefix)) continue;
    s0++;
    const st = stageOf(cap, req, minRank, claims);
    if (st >= 1) s1++;
    if (st >= 2) s2++;
    if (st >= 3) s3++;
    if (st >= 4) {
      if (out !== undefined && s4 < need) out.push(cap.id);
      s4++;
    }
  }
  if (s4 >= need) return null;
  if (out !== undefined) out.length -= Math.min(out.length, s4);
  if (s0 === 0) return 'no_such_id';
  if (s1 === 0) return 'provenance_too_low';
  if (s2 === 0) return 'predicate_failed';
  if (s3 === 0) return 'unavailable';
  if (s4 === 0) return 'contended';
  return s3 >= need ? 'contended' : 'insufficient_count';
}

/** A short human label of a requirement (`cpu.arch.aarch64`, `runtime.container.* x2 exclusive`). */
export function describeRequirement(req: Requirement): string {
  let s = req.id ?? `${req.id_prefix ?? ''}.*`;
  if (req.where !== undefined && req.where.length > 0) {
    s += ` where ${req.where.map((p) => `${p.attr} ${p.op} ${JSON.stringify(p.value)}`).join(' and ')}`;
  }
  if ((req.count ?? 1) > 1) s += ` x${req.count}`;
  if (req.exclusive === true) s += ' exclusive';
  if (req.min_provenance !== undefined) s += ` >=${req.min_provenance}`;
  return s;
}
