/**
 * The audit chain's routes (docs/operator-api.md, "Audit chain"): their answers and query, with the
 * types they parse to. The controller's chain is read only through these: nothing here appends.
 */
import type { JsonValue } from '@heddle/envelope';
import { z } from 'zod';
import type { ExplanationAnswer } from './answer-types.js';
import { ExplanationSchema } from './answers.js';

/** One chain event (`ChainEvent` of `@heddle/chain`). */
export interface ChainEventAnswer {
  readonly seq: number;
  readonly ts: number;
  readonly source: string;
  readonly kind: string;
  readonly payload: JsonValue;
  readonly payload_hash: string;
  readonly prev_hash: string;
  readonly hash: string;
}

/** The answer of `GET /v1/chain`: the chain's head, Merkle root and a full verification. */
export interface ChainHeadAnswer {
  /** Events in the chain. */
  readonly size: number;
  /** The last event's hash (64 zeros when empty). */
  readonly head: string;
  /** The Merkle root of all events. */
  readonly root: string;
  /** Every hash and link recomputed now: ok, or the first failure. */
  readonly verify: {
    readonly ok: boolean;
    readonly size: number;
    readonly failure: { readonly seq: number; readonly reason: string; readonly message: string } | null;
  };
}

/** The answer of `GET /v1/chain/events/:id`: the event and its inclusion proof in the whole chain. */
export interface ChainEventProofAnswer {
  readonly event: ChainEventAnswer;
  readonly proof: {
    readonly seq: number;
    readonly size: number;
    readonly leaf: string;
    readonly path: readonly string[];
    readonly root: string;
  };
}

/** The answer of `GET /v1/decisions/:id`: a place decision's chain event and its explanation, when kept. */
export interface DecisionAnswer {
  readonly event: ChainEventAnswer;
  /** The engine's explanation (kept in memory for the last decisions this process made), or null. */
  readonly explanation: ExplanationAnswer | null;
}

/** The query of `GET /v1/chain/events`. */
export interface ChainEventsQuery {
  /** At most this many (1..200, default 50), newest first. */
  readonly limit: number;
  /** Only events with a seq below this (paging back), or undefined: from the head. */
  readonly before?: number | undefined;
}

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');
const Json = z.custom<JsonValue>((v) => v !== undefined, 'expected a JSON value');
const Seq = z.int().nonnegative();

/** Schema of {@link ChainEventAnswer}. */
export const ChainEventSchema: z.ZodType<ChainEventAnswer> = z.strictObject({
  seq: Seq,
  ts: z.int().nonnegative(),
  source: z.string(),
  kind: z.string(),
  payload: Json,
  payload_hash: hex64,
  prev_hash: hex64,
  hash: hex64,
});

/** Schema of {@link ChainHeadAnswer}. */
export const ChainHeadSchema: z.ZodType<ChainHeadAnswer> = z.strictObject({
  size: Seq,
  head: hex64,
  root: hex64,
  verify: z.strictObject({
    ok: z.boolean(),
    size: Seq,
    failure: z.strictObject({ seq: Seq, reason: z.string(), message: z.string() }).nullable(),
  }),
});

/** Schema of {@link ChainEventProofAnswer}. */
export const ChainEventProofSchema: z.ZodType<ChainEventProofAnswer> = z.strictObject({
  event: ChainEventSchema,
  proof: z.strictObject({
    seq: Seq,
    size: Seq,
    leaf: hex64,
    path: z.array(hex64).max(128),
    root: hex64,
  }),
});

/** Schema of {@link DecisionAnswer}. */
export const DecisionSchema: z.ZodType<DecisionAnswer> = z.strictObject({
  event: ChainEventSchema,
  explanation: ExplanationSchema.nullable(),
});

const whole = (field: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, `${field}: expected a whole number ${min}..${max}`)
    .transform(Number)
    .pipe(
      z.int().min(min, `${field}: expected ${min}..${max}`).max(max, `${field}: expected ${min}..${max}`),
    );

/** Schema of {@link ChainEventsQuery}. */
export const ChainEventsQuerySchema: z.ZodType<ChainEventsQuery> = z
  .strictObject({
    limit: whole('limit', 1, 200).optional(),
    before: whole('before', 0, Number.MAX_SAFE_INTEGER).optional(),
  })
  .transform((q) => ({ limit: q.limit ?? 50, ...(q.before === undefined ? {} : { before: q.before }) }));
