import { HEX32_RE, HEX64_RE, isJsonObject, type JsonObject } from '@heddle/envelope';
import { z } from 'zod';
import { MAX_LIFETIME_MS } from './limits.js';
import { ANY_TARGET, CTL_METHODS, type CtlMethod, DESCRIBE_METHOD, mutates } from './methods.js';

/** A request body: a JSON object (`{}` when a method takes no arguments). */
export type CtlBody = JsonObject;

/**
 * A control request, exactly as it travels (snake_case). Signed as the canonical JSON of this object
 * with the `ctlRequest` domain tag; see docs/protocol.md.
 */
export interface CtlRequest {
  /** Protocol version, always 1. */
  readonly version: 1;
  /** The method called. */
  readonly method: CtlMethod;
  /** Node id of the sender; must be the node id of the signing key. */
  readonly requester: string;
  /** Node id of the addressed host, or `"*"` (describe only). */
  readonly target: string;
  /** 16 random bytes as 32 lower-case hex characters; a host accepts each nonce once. */
  readonly nonce: string;
  /** When the request was made (Unix ms, the controller's clock). */
  readonly issued_at_ms: number;
  /** When it stops being valid (Unix ms); at most 300 s after `issued_at_ms`. */
  readonly expires_at_ms: number;
  /** Chain hash (64 lower-case hex) of the controller's decision; required by mutating methods. */
  readonly decision_id?: string;
  /** Method-specific arguments (a JSON object; `{}` when there are none). */
  readonly body: CtlBody;
}

const timestamp = z.int().nonnegative();
const jsonObject = z.custom<JsonObject>(isJsonObject, { message: 'expected a JSON object' });

/**
 * The complete format of a {@link CtlRequest}: every field, its form, unknown fields refused, version
 * 1, a known method, `decision_id` present on mutating methods, target `"*"` only with describe, and
 * a lifetime of 1 ms to 300 s. It checks form only (no clock, no signature, no nonce memory):
 * `verifyRequest` applies the same rules in the protocol's order, with refusal codes.
 */
export const CtlRequestSchema: z.ZodType<CtlRequest> = z
  .strictObject({
    version: z.literal(1),
    method: z.enum(CTL_METHODS),
    requester: z.string().regex(HEX32_RE, 'expected a node id (32 lower-case hex characters)'),
    target: z
      .string()
      .refine((t) => t === ANY_TARGET || HEX32_RE.test(t), 'expected a node id (32 lower-case hex) or "*"'),
    nonce: z.string().regex(HEX32_RE, 'expected 32 lower-case hex characters'),
    issued_at_ms: timestamp,
    expires_at_ms: timestamp,
    decision_id: z.string().regex(HEX64_RE, 'expected 64 lower-case hex characters').exactOptional(),
    body: jsonObject,
  })
  .superRefine((r, ctx) => {
    if (mutates(r.method) && r.decision_id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['decision_id'],
        message: `${r.method} must carry a decision_id`,
      });
    }
    if (r.target === ANY_TARGET && r.method !== DESCRIBE_METHOD) {
      ctx.addIssue({
        code: 'custom',
        path: ['target'],
        message: `"*" is only allowed with ${DESCRIBE_METHOD}`,
      });
    }
    const lifetime = r.expires_at_ms - r.issued_at_ms;
    if (lifetime <= 0 || lifetime > MAX_LIFETIME_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['expires_at_ms'],
        message: `lifetime must be 1 ms to ${MAX_LIFETIME_MS} ms`,
      });
    }
  });
