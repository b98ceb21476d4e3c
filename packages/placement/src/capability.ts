import { z } from 'zod';
import { parseOrThrow } from './parse.js';
import {
  CAPABILITY_ID_RE,
  CAPABILITY_STATES,
  type CapabilityState,
  MAX_CAPABILITY_ID_LENGTH,
  PROVENANCES,
  type Provenance,
} from './vocabulary.js';

/** A scalar attribute value (integers only, so that facts canonicalise). */
export type AttrScalar = string | number | boolean;
/** An attribute value: a scalar or a short list of scalars. */
export type AttrValue = AttrScalar | readonly AttrScalar[];

/**
 * One thing a node can offer: an open, dotted id (`cpu.arch.aarch64`, `runtime.container.docker`,
 * `accel.gpu.0`, `perf.cpu`, or any id a node invents), attributes, how it is known, its state, and
 * whether one workload at a time may hold it.
 */
export interface Capability {
  /** Dotted lower-case id; unknown ids are carried and matched like known ones. */
  readonly id: string;
  /** Attributes (`size_mb`, `arches_native`, `score`, ...). */
  readonly attrs: Readonly<Record<string, AttrValue>>;
  /** `claimed < probed < measured`. */
  readonly provenance: Provenance;
  /** `available | busy | reserved | degraded`. */
  readonly state: CapabilityState;
  /** Held by one workload at a time (a sensor feed, a GPU). */
  readonly exclusive: boolean;
}

/** Limits on capabilities and attributes (bounded so hostile facts stay small). */
export const CAPABILITY_LIMITS: {
  readonly maxAttrs: 64;
  readonly maxAttrKeyLength: 64;
  readonly maxStringLength: 256;
  readonly maxListLength: 64;
  readonly maxCapabilities: 1024;
} = { maxAttrs: 64, maxAttrKeyLength: 64, maxStringLength: 256, maxListLength: 64, maxCapabilities: 1024 };

const ATTR_KEY_RE = /^[a-z0-9_]+$/;

/** Schema of a capability id. */
export const CapabilityIdSchema: z.ZodType<string> = z
  .string()
  .max(MAX_CAPABILITY_ID_LENGTH, `at most ${MAX_CAPABILITY_ID_LENGTH} characters`)
  .regex(CAPABILITY_ID_RE, 'expected a dotted lower-case id such as cpu.arch.aarch64');

/** Schema of an attribute scalar (safe integers only). */
export const AttrScalarSchema: z.ZodType<AttrScalar> = z.union([
  z.string().max(CAPABILITY_LIMITS.maxStringLength),
  z.int(),
  z.boolean(),
]);

/** Schema of an attribute value. */
export const AttrValueSchema: z.ZodType<AttrValue> = z.union([
  AttrScalarSchema,
  z.array(AttrScalarSchema).max(CAPABILITY_LIMITS.maxListLength),
]);

/** Schema of an attribute key. */
export const AttrKeySchema: z.ZodType<string> = z
  .string()
  .max(CAPABILITY_LIMITS.maxAttrKeyLength)
  .regex(ATTR_KEY_RE, 'expected lower-case letters, digits and _');

/**
 * Schema of a {@link Capability}. `attrs` defaults to `{}`, `provenance` to `claimed`, `state` to
 * `available`, `exclusive` to false; unknown fields are refused.
 */
export const CapabilitySchema: z.ZodType<Capability> = z.strictObject({
  id: CapabilityIdSchema,
  attrs: z
    .record(AttrKeySchema, AttrValueSchema)
    .refine(
      (a) => Object.keys(a).length <= CAPABILITY_LIMITS.maxAttrs,
      `at most ${CAPABILITY_LIMITS.maxAttrs} attrs`,
    )
    .default({}),
  provenance: z.enum(PROVENANCES).default('claimed'),
  state: z.enum(CAPABILITY_STATES).default('available'),
  exclusive: z.boolean().default(false),
});

/** Schema of a node's capability list: bounded, ids unique. */
export const CapabilityListSchema: z.ZodType<readonly Capability[]> = z
  .array(CapabilitySchema)
  .max(CAPABILITY_LIMITS.maxCapabilities)
  .superRefine((caps, ctx) => {
    const seen = new Set<string>();
    caps.forEach((c, i) => {
      if (seen.has(c.id))
        ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate capability ${c.id}` });
      seen.add(c.id);
    });
  });

/** Parses one capability from untrusted input; throws `invalid_capability` naming the field. */
export function parseCapability(input: unknown): Capability {
  return parseOrThrow(CapabilitySchema, input, 'invalid_capability', 'capability');
}

/** Parses a capability list from untrusted input; throws `invalid_capability` naming the field. */
export function parseCapabilities(input: unknown): readonly Capability[] {
  return parseOrThrow(CapabilityListSchema, input, 'invalid_capability', 'capabilities', 'capabilities');
}
