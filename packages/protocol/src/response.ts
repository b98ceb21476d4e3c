import type { JsonValue } from '@heddle/envelope';
import { utf8Length } from '@heddle/envelope';
import { z } from 'zod';
import { MAX_REASON_LENGTH } from './limits.js';
import { REFUSAL_CODES, type RefusalCode } from './refusal.js';

/** A successful call: the method's result (any JSON value; `null` when there is nothing to say). */
export interface CtlOk {
  /** Discriminator: `"ok"`. */
  readonly status: 'ok';
  /** The method's result. */
  readonly result: JsonValue;
}

/** A refused call: a stable code, a reason for people, and whether the request was authenticated. */
export interface CtlRefused {
  /** Discriminator: `"refused"`. */
  readonly status: 'refused';
  /** One of the refusal codes. */
  readonly code: RefusalCode;
  /** Why, naming the field when there is one (at most 4096 bytes of UTF-8). */
  readonly reason: string;
  /**
   * True when the refused delivery passed verification (so its nonce was consumed by this very
   * delivery and the host acted on no other copy). False for every verification refusal: then another
   * copy of the same request may have been accepted earlier, so a controller treats a `false` refusal
   * of a mutating call as Indeterminate, not as Refused.
   */
  readonly authenticated: boolean;
}

/**
 * The outcome of a call. On the wire: `{"status":"ok","result":...}` or
 * `{"status":"refused","code":"...","reason":"...","authenticated":false}` (keys in canonical order).
 */
export type CtlOutcome = CtlOk | CtlRefused;

/**
 * A host's answer, exactly as it travels (snake_case). Signed as the canonical JSON of this object
 * with the `ctlResponse` domain tag.
 */
export interface CtlResponse {
  /** Protocol version, always 1. */
  readonly version: 1;
  /** The method of the request answered (as claimed, when the request could not be verified). */
  readonly method: string;
  /** Node id of the host; must be the node id of the signing key. */
  readonly responder: string;
  /** Nonce of the request answered, or `""` when the request carried none that could be read. */
  readonly request_nonce: string;
  /** What happened. */
  readonly outcome: CtlOutcome;
}

/** Printable ASCII, at most 128 characters: the form of a `method` echoed in a response. */
export const RESPONSE_METHOD_RE: RegExp = /^[\x21-\x7e]{0,128}$/;

/** Schema of a {@link CtlOutcome}. */
export const CtlOutcomeSchema: z.ZodType<CtlOutcome> = z.discriminatedUnion('status', [
  z.strictObject({ status: z.literal('ok'), result: z.custom<JsonValue>((v) => v !== undefined) }),
  z.strictObject({
    status: z.literal('refused'),
    code: z.enum(REFUSAL_CODES),
    reason: z
      .string()
      .refine((r) => utf8Length(r) <= MAX_REASON_LENGTH, `at most ${MAX_REASON_LENGTH} bytes of UTF-8`),
    authenticated: z.boolean(),
  }),
]);

/** The complete format of a {@link CtlResponse} (form only; `verifyResponse` checks the rest). */
export const CtlResponseSchema: z.ZodType<CtlResponse> = z.strictObject({
  version: z.literal(1),
  method: z.string().regex(RESPONSE_METHOD_RE, 'expected printable ASCII, at most 128 characters'),
  responder: z.string().regex(/^[0-9a-f]{32}$/, 'expected a node id (32 lower-case hex characters)'),
  request_nonce: z.string().regex(/^(?:[0-9a-f]{32})?$/, 'expected 32 lower-case hex characters or ""'),
  outcome: CtlOutcomeSchema,
});

/** The successful outcome carrying `result`. */
export function okOutcome(result: JsonValue): CtlOk {
  return { status: 'ok', result };
}

/**
 * The refused outcome with `code`, `reason` and `authenticated` (see {@link CtlRefused.authenticated});
 * `signResponse` also takes a `Refusal` directly.
 */
export function refusedOutcome(code: RefusalCode, reason: string, authenticated: boolean): CtlRefused {
  return { status: 'refused', code, reason, authenticated };
}
