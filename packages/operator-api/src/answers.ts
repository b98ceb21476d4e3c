/**
 * The schemas of the operator API's answers (docs/operator-api.md, "Routes"). Objects are strict: a
 * field the contract does not name is a broken answer, so a drift between the daemon and its clients
 * is caught at the first call. The same shapes are what `heddle <command> --json` prints.
 */
import type {
  AlertRecord,
  ApprovalView,
  AttemptOutcome,
  DrainReport,
  NodeView,
  RevocationPushReport,
  SettleReport,
  TransferProgress,
  UnsettledRecord,
} from '@heddle/control-plane';
import { APPROVAL_STATES, HELD_PLACE_STATUSES, PLACEMENT_STATES } from '@heddle/control-plane/contract';
import type { JsonValue } from '@heddle/envelope';
import { z } from 'zod';
import type {
  ApiErrorBody,
  ApiHealth,
  ApiInfo,
  ExplanationAnswer,
  InstanceLogs,
  InstanceStatus,
  PlaceAnswer,
  Placement,
  PlaceStreamEvent,
  RevocationStatus,
  StopResult,
} from './answer-types.js';

const hex = (n: number): z.ZodString =>
  z.string().regex(new RegExp(`^[0-9a-f]{${n}}$`), `expected ${n} lower-case hex characters`);
const NodeId = hex(32);
const Hash = hex(64);
const Tier = z.enum(['discovered', 'paired', 'pinned']);
const Ms = z.int().nonnegative();
const Count = z.int().nonnegative();
/** Any JSON value (the host's own view of an instance, its stop evidence): present, not checked further. */
const Json = z.custom<JsonValue>((v) => v !== undefined, 'expected a JSON value');

/** A node (`NodeView` of `@heddle/control-plane`). */
export const NodeViewSchema: z.ZodType<NodeView> = z.strictObject({
  node_id: NodeId,
  url: z.string().regex(/^(wss?|https?):\/\//, 'expected a ws://, wss://, http:// or https:// URL'),
  public_key: Hash,
  key_source: z.enum(['tofu', 'pinned']),
  tier: Tier.nullable(),
  assigned_tier: Tier,
  pending_key: Hash.nullable(),
  liveness: z.enum(['alive', 'suspect', 'dead', 'unknown']),
  routes: z.array(z.string()),
  software: z.strictObject({ name: z.string(), version: z.string() }).nullable(),
  capabilities: z.array(z.string()),
  facts_expire_at_ms: Ms.nullable(),
  last_seen_ms: Ms.nullable(),
  unreachable_since_ms: Ms.nullable(),
  last_error: z.string().nullable(),
  instances: Count,
  cordoned: z.boolean(),
  labels: z.record(z.string(), z.string()),
  clock: z
    .strictObject({ offset_ms: z.int(), error_ms: Count, measured_at_ms: Ms, refused: z.boolean() })
    .nullable(),
});

/** A placement (`PlacementRecord` of `@heddle/control-plane`). */
export const PlacementSchema: z.ZodType<Placement> = z.strictObject({
  instance_id: z.string().min(1),
  node_id: NodeId,
  order_id: z.string().regex(/^o-[0-9a-f]{16}$/, 'expected o- and 16 hex characters'),
  decision_id: Hash,
  workload: z.string().min(1),
  version: z.string().min(1),
  variant: z.string().min(1),
  runtime: z.string().min(1),
  /** Empty for a Seed store pin (the Seed installs from its own store). */
  manifest_hash: z.union([Hash, z.literal('')]),
  package_id: z.string().min(1),
  signer_keys: z.array(z.string()),
  artifact_hashes: z.array(z.string()),
  state: z.enum(PLACEMENT_STATES),
  desired_running: z.boolean(),
  placed_at_ms: Ms,
  updated_at_ms: Ms,
  /** The instance this one replaced (a reschedule), or null; absent on records older than schema v3. */
  replaces: z.string().nullable().optional(),
  /** Reschedules of its lineage so far (absent or 0 for an original). */
  reschedules: Count.optional(),
  /** The resources it holds on its node (schema v10; absent on older records and Seed store pins). */
  ram_mb: Count.optional(),
  cpu_pct: Count.optional(),
});

/** An alert: a lost instance the controller did not move (`AlertRecord`). */
export const AlertSchema: z.ZodType<AlertRecord> = z.strictObject({
  alert_id: z.string().regex(/^al-[0-9a-f]{16}$/, 'expected al- and 16 hex characters'),
  /** `""` for an alert about a node (`clock_skew`). */
  instance_id: z.string(),
  node_id: NodeId,
  order_id: z.string(),
  reason: z.enum(['pinned', 'not_migratable', 'reschedule_limit', 'no_order', 'clock_skew']),
  detail: z.string(),
  raised_at_ms: Ms,
  acked_at_ms: Ms.nullable(),
});

const ExplainRowSchema = z.strictObject({
  node_id: z.string(),
  verdict: z.enum(['chosen', 'pinned', 'candidate', 'rejected']),
  variant: z.string().optional(),
  execution: z.enum(['native', 'dev_fallback', 'emulated']).optional(),
  score: z.number().optional(),
  parts: z
    .strictObject({
      execution: z.number(),
      affinity: z.number(),
      accelerator_fit: z.number(),
      measured_performance: z.number(),
      load: z.number(),
      stickiness: z.number(),
      spread: z.number(),
    })
    .optional(),
  failures: z
    .array(
      z.strictObject({
        constraint: z.string(),
        detail: z.string(),
        variant: z.string().optional(),
        alternative: z.string().optional(),
        requirement: z.string().optional(),
        reason: z.string().optional(),
      }),
    )
    .optional(),
});

/** The engine's explanation of a decision (`Explanation` of `@heddle/placement`). */
export const ExplanationSchema: z.ZodType<ExplanationAnswer> = z.strictObject({
  workload: z.string(),
  outcome: z.enum(['placed', 'unplaceable', 'pin_refused']),
  node_id: z.string().optional(),
  summary: z.string(),
  nodes_evaluated: Count,
  nodes_total: Count,
  sampled: z.boolean(),
  rows: z.array(ExplainRowSchema),
});

/** One dispatch of a place to a node (`AttemptOutcome`). */
export const AttemptSchema: z.ZodType<AttemptOutcome> = z.strictObject({
  node_id: NodeId,
  variant: z.string(),
  outcome: z.enum([
    'placed',
    'refused',
    'unreachable',
    'indeterminate',
    'gate_denied',
    'unsettled',
    'skipped',
  ]),
  code: z.string().nullable(),
  reason: z.string().nullable(),
});

/** The answer of `POST /v1/place` (`PlaceResult`). */
export const PlaceResultSchema: z.ZodType<PlaceAnswer> = z.strictObject({
  status: z.enum(['placed', 'dry_run', 'unsettled', 'awaiting_approval']),
  approval_id: z.string().optional(),
  order_id: z.string().nullable(),
  decision_id: Hash.nullable(),
  instance: PlacementSchema.nullable(),
  attempts: z.array(AttemptSchema),
  explanation: ExplanationSchema,
  replayed: z.literal(true).optional(),
});

/** The answer of `GET /v1/health`: the controller's node id and counts. */
export const HealthSchema: z.ZodType<ApiHealth> = z.strictObject({
  /** The controller's node id. */
  controller: NodeId,
  /** Known nodes. */
  nodes: Count,
  /** Placements still on their node (not lost, rescheduled, revoked or unloaded). */
  instances: Count,
  /** Unsettled decisions. */
  unsettled: Count,
  /** Who leads (several controllers), null when this one runs alone. */
  leadership: z
    .strictObject({
      leading: z.boolean(),
      leader: NodeId.nullable(),
      epoch: Count,
      expires_at_ms: Ms,
      last_error: z.string().nullable(),
    })
    .nullable()
    .optional(),
});

/** A decision whose answer was lost and is not yet reconciled (`UnsettledRecord`). */
export const UnsettledSchema: z.ZodType<UnsettledRecord> = z.strictObject({
  decision_id: Hash,
  order_id: z.string().min(1),
  node_id: NodeId,
  expected_instance_id: z.string().nullable(),
  variant: z.string(),
  since_ms: Ms,
  attempts: Count,
  last_error: z.string(),
  /** The resources its place would hold on the node (schema v10; absent on older records). */
  ram_mb: Count.optional(),
  cpu_pct: Count.optional(),
});

/** The answer of `POST /v1/settle`: decision ids by outcome (`SettleReport`). */
export const SettleReportSchema: z.ZodType<SettleReport> = z.strictObject({
  placed: z.array(Hash),
  nothing: z.array(Hash),
  pending: z.array(Hash),
});

/** `{placement, node}`: a placement and the host's own view of the instance (`GET /v1/instances/<id>`). */
export const InstanceStatusSchema: z.ZodType<InstanceStatus> = z.strictObject({
  placement: PlacementSchema,
  node: Json,
});

/** The last lines of an instance's output (`GET /v1/instances/<id>/logs`). */
export const InstanceLogsSchema: z.ZodType<InstanceLogs> = z.strictObject({
  instance_id: z.string().min(1),
  lines: z.array(z.string()),
  truncated: z.boolean(),
});

/** The answer of a stop: the placement and the node's evidence. */
export const StopResultSchema: z.ZodType<StopResult> = z.strictObject({
  placement: PlacementSchema,
  evidence: Json,
});

/** The answer of `GET /v1/revocations`: the generation distributed (0: none) and each node's acknowledgement. */
export const RevocationStatusSchema: z.ZodType<RevocationStatus> = z.strictObject({
  generation: Count,
  nodes: z.array(
    z.strictObject({
      node_id: NodeId,
      generation: Count,
      acked_at_ms: Ms.nullable(),
      last_error: z.string().nullable(),
    }),
  ),
});

/** The answer of `POST /v1/revocations`: what each node did with the list (`RevocationPushReport`). */
export const RevocationPushReportSchema: z.ZodType<RevocationPushReport> = z.strictObject({
  generation: Count,
  revoked: z.array(z.string()),
  nodes: z.array(
    z.strictObject({
      node_id: NodeId,
      outcome: z.enum(['applied', 'held', 'failed', 'skipped']),
      generation: Count,
      torn_down: z.array(z.string()),
      reason: z.string().nullable(),
    }),
  ),
});

/** The body of every failure of the operator API: `{"error": {...}}`. */
export const ApiErrorBodySchema: z.ZodType<ApiErrorBody> = z.strictObject({
  /** A stable snake_case code (see the README's "Error codes"). */
  code: z.string().regex(/^[a-z][a-z0-9_]*$/, 'expected a snake_case code'),
  /** What went wrong and what to do. */
  message: z.string(),
  /** The input field at fault, when there is one. */
  field: z.string().optional(),
  /** Per-node reasons (node id to reason), for `unplaceable` and `refused`. */
  reasons: z.record(z.string(), z.string()).optional(),
});

/** A failure's whole answer. */
export const ApiErrorAnswerSchema: z.ZodType<{ readonly error: ApiErrorBody }> = z.strictObject({
  error: ApiErrorBodySchema,
});

/** Progress of a package transfer to one node: bytes served so far of `total`. */
export const TransferProgressSchema: z.ZodType<TransferProgress> = z.strictObject({
  node_id: NodeId,
  bytes: Count,
  total: Count,
});

/** One line of the `POST /v1/place` NDJSON stream. */
export const PlaceStreamEventSchema: z.ZodType<PlaceStreamEvent> = z.discriminatedUnion('event', [
  z.strictObject({ event: z.literal('progress'), node_id: NodeId, bytes: Count, total: Count }),
  z.strictObject({ event: z.literal('result'), result: PlaceResultSchema }),
  z.strictObject({ event: z.literal('error'), error: ApiErrorBodySchema }),
]);

/** What the running daemon writes to `<home>/api.json` (mode 0600) after it listens. */
export const ApiInfoSchema: z.ZodType<ApiInfo> = z.strictObject({
  /** `http://127.0.0.1:<port>`. */
  url: z.string().regex(/^http:\/\/127\.0\.0\.1:\d{1,5}$/, 'expected http://127.0.0.1:<port>'),
  /** The daemon's process id. */
  pid: z.int().positive(),
  /** The controller's node id. */
  node_id: NodeId,
  /** The TLS listener for other machines, when `api.remote` is configured: its URL and certificate fingerprint. */
  remote: z
    .strictObject({
      url: z.string().regex(/^https:\/\/[^/\s]{1,300}$/, 'expected https://<host>:<port>'),
      fingerprint: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256:<64 hex>'),
    })
    .optional(),
});

/** An approval request and the place it holds (`ApprovalView` of `@heddle/control-plane`). */
export const ApprovalViewSchema: z.ZodType<ApprovalView> = z.strictObject({
  approval_id: z.string().regex(/^[0-9a-f]{8,64}$/, 'expected 8..64 lower-case hex characters'),
  state: z.enum(APPROVAL_STATES),
  action: z.string().min(1),
  agent: z.string().min(1),
  rule: z.string().min(1),
  reason: z.string(),
  created_at_ms: Ms,
  expires_at_ms: Ms,
  decided_at_ms: Ms.nullable(),
  decided_by: z.string().nullable(),
  note: z.string().nullable(),
  outcome: z
    .strictObject({ verdict: z.enum(['permit', 'deny']), rule: z.string(), reason: z.string() })
    .nullable(),
  defer_event: Hash.nullable(),
  resolution_event: Hash.nullable(),
  place: z
    .strictObject({
      workload: z.string().min(1),
      version: z.string().min(1),
      manifest_hash: Hash,
      node_id: NodeId,
      variant: z.string().min(1),
      status: z.enum(HELD_PLACE_STATUSES),
      order_id: z.string().nullable(),
      instance_id: z.string().nullable(),
      detail: z.string().nullable(),
    })
    .nullable(),
});

/** The answer of `POST /v1/nodes/<id>/drain` (`DrainReport`). */
export const DrainReportSchema: z.ZodType<DrainReport> = z.strictObject({
  node_id: NodeId,
  cordoned: z.boolean(),
  moved: z.array(
    z.strictObject({
      instance_id: z.string().min(1),
      to_instance_id: z.string().min(1),
      to_node_id: NodeId,
      decision_id: Hash,
    }),
  ),
  left: z.array(
    z.strictObject({
      instance_id: z.string().min(1),
      reason: z.enum(['pinned', 'not_migratable', 'reschedule_limit', 'no_order', 'failed', 'job']),
      detail: z.string(),
      alert_id: z.string().nullable(),
    }),
  ),
});
