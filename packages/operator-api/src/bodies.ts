/**
 * The schemas of the operator API's request bodies and query strings (docs/operator-api.md,
 * "Routes"). Bodies are strict JSON objects: an unknown field is refused (`invalid_input`, naming it).
 */
import { isAbsolute } from 'node:path';
import {
  APPROVAL_STATES,
  type ApprovalViewState,
  type PlaceOrderInput,
  PlaceOrderInputSchema,
} from '@heddle/control-plane';
import { NODE_TIERS, type NodeTier } from '@heddle/model';
import { type RevocationListFile, RevocationListFileSchema } from '@heddle/package';
import { z } from 'zod';

const Hex64 = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'expected an Ed25519 public key as 64 lower-case hex characters');
const Tier = z.enum(NODE_TIERS, { error: `expected one of ${NODE_TIERS.join(', ')}` });

/** The body of `POST /v1/nodes`. */
export interface AddNodeBody {
  /** The host's `ws://` or `wss://` URL. */
  readonly url: string;
  /** The trust tier to assign. */
  readonly tier: NodeTier;
  /** Accept only this key (64 hex); without it the answering key is trusted on first use. */
  readonly key?: string | undefined;
}

/** Schema of {@link AddNodeBody}. */
export const AddNodeBodySchema: z.ZodType<AddNodeBody> = z.strictObject({
  url: z.string().min(1, 'expected a ws:// or wss:// URL').max(2048),
  tier: Tier,
  key: Hex64.optional(),
});

/** The body of `POST /v1/nodes/<id>/pin`. */
export interface PinBody {
  /** The key to pin (64 hex). */
  readonly key: string;
  /** A new tier, when it changes. */
  readonly tier?: NodeTier | undefined;
}

/** Schema of {@link PinBody}. */
export const PinBodySchema: z.ZodType<PinBody> = z.strictObject({ key: Hex64, tier: Tier.optional() });

/** The body of `POST /v1/nodes/seed`. */
export interface AddSeedBody {
  /** `https://host[:port]` (or `http://` on the USB link, with `allow_plain_http`). */
  readonly url: string;
  /** SHA-256 of the Seed's TLS public key (64 hex). */
  readonly spki: string;
  /** A file on the controller machine holding the Seed's bearer token. */
  readonly token_file: string;
  readonly tier: NodeTier;
  readonly allow_plain_http?: boolean | undefined;
}

/** Schema of {@link AddSeedBody}. */
export const AddSeedBodySchema: z.ZodType<AddSeedBody> = z.strictObject({
  url: z
    .string()
    .regex(/^https?:\/\/[^\s]+$/, 'expected https://host[:port] (or http:// on the USB link)')
    .max(2048),
  spki: Hex64,
  token_file: z.string().min(1).max(4096),
  tier: Tier,
  allow_plain_http: z.boolean().optional(),
});

/** The body of the routes that take none: `{}` (or an empty body). */
export type EmptyBody = Readonly<Record<string, never>>;

/** Schema of {@link EmptyBody}. */
export const EmptyBodySchema: z.ZodType<EmptyBody> = z.strictObject({});

/** The body of `POST /v1/instances/<id>/stop`. */
export interface StopBody {
  /** How long the instance may take to stop before it is killed, in ms (0..3 600 000). */
  readonly grace_ms?: number | undefined;
}

/** Schema of {@link StopBody}. */
export const StopBodySchema: z.ZodType<StopBody> = z.strictObject({
  grace_ms: z.int('expected whole milliseconds').min(0).max(3_600_000).optional(),
});

/**
 * The body of `POST /v1/place`: the order (`PlaceOrderInput` of `@heddle/control-plane`), with
 * `package_dir` an absolute path on the controller machine.
 */
export const PlaceBodySchema: z.ZodType<PlaceOrderInput> = PlaceOrderInputSchema.refine(
  (o) => o.package_dir === undefined || isAbsolute(o.package_dir),
  { message: 'expected an absolute path on the controller machine', path: ['package_dir'] },
);

/** The body of `POST /v1/revocations`: a signed revocation list file. */
export const RevocationsBodySchema: z.ZodType<RevocationListFile> = RevocationListFileSchema;

/** A boolean query parameter: `1`, `true` or empty (`?force`) for true; `0` or `false` for false. */
const Flag = z
  .enum(['', '1', 'true', '0', 'false'], { error: 'expected 1 or 0' })
  .transform((v) => v === '' || v === '1' || v === 'true');

/** The query of `DELETE /v1/nodes/<id>`. */
export interface ForceQuery {
  /** Forget the node even while it has placements. */
  readonly force: boolean;
}

/** Schema of {@link ForceQuery} (from the query string's parameters). */
export const ForceQuerySchema: z.ZodType<ForceQuery> = z
  .strictObject({ force: Flag.optional() })
  .transform((q) => ({ force: q.force ?? false }));

/** The query of `GET /v1/alerts`. */
export interface AlertsQuery {
  /** Only the alerts not acknowledged yet. */
  readonly unacknowledged: boolean;
}

/** Schema of {@link AlertsQuery}. */
export const AlertsQuerySchema: z.ZodType<AlertsQuery> = z
  .strictObject({ unacknowledged: Flag.optional() })
  .transform((q) => ({ unacknowledged: q.unacknowledged ?? false }));

/** The query of `GET /v1/approvals`. */
export interface ApprovalsQuery {
  /** Only the requests in this state (absent: all). */
  readonly state?: ApprovalViewState | undefined;
}

/** Schema of {@link ApprovalsQuery}. */
export const ApprovalsQuerySchema: z.ZodType<ApprovalsQuery> = z
  .strictObject({
    state: z.enum(APPROVAL_STATES, { error: `expected one of ${APPROVAL_STATES.join(', ')}` }).optional(),
  })
  .transform((q) => (q.state === undefined ? {} : { state: q.state }));

/** The body of `POST /v1/approvals/<id>/approve` and `.../reject`. */
export interface ApprovalNoteBody {
  /** The operator's note, chained with the decision (at most 2048 characters). */
  readonly note?: string | undefined;
}

/** Schema of {@link ApprovalNoteBody}. */
export const ApprovalNoteBodySchema: z.ZodType<ApprovalNoteBody> = z.strictObject({
  note: z.string().max(2048, 'expected at most 2048 characters').optional(),
});

/** The query of `GET /v1/instances/<id>/logs`. */
export interface LogsQuery {
  /** How many of the last lines (1..10 000); absent: the controller's default (100). */
  readonly lines?: number | undefined;
}

/** Schema of {@link LogsQuery}. */
export const LogsQuerySchema: z.ZodType<LogsQuery> = z
  .strictObject({
    lines: z
      .string()
      .regex(/^\d{1,5}$/, 'expected a whole number 1..10000')
      .transform(Number)
      .pipe(
        z.int().min(1, 'expected a whole number 1..10000').max(10_000, 'expected a whole number 1..10000'),
      )
      .optional(),
  })
  .transform((q) => (q.lines === undefined ? {} : { lines: q.lines }));

/** The query of a route that takes no parameters. */
export type NoQuery = Readonly<Record<string, never>>;

/** Schema of {@link NoQuery}: any parameter is refused. */
export const NoQuerySchema: z.ZodType<NoQuery> = z.strictObject({});
