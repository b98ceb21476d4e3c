/**
 * Schemas of what the operator commands print with `--json` (one JSON object per line on standard
 * output; errors on standard error). They follow the operator API's answers (docs/operator-api.md)
 * and the types of `@heddle/control-plane`; the CLI tests validate real outputs against them, so a
 * change of shape is caught. Objects are strict: an unexpected field is a failure.
 */
import { PLACEMENT_STATES } from '@heddle/control-plane';
import { z } from 'zod';

const hex = (n: number): z.ZodString => z.string().regex(new RegExp(`^[0-9a-f]{${n}}$`));
const NodeId = hex(32);
const Hash = hex(64);
const Tier = z.enum(['discovered', 'paired', 'pinned']);
const Ms = z.number().int().nonnegative();

/** A node (`NodeView`). */
export const NodeViewSchema = z.strictObject({
  node_id: NodeId,
  url: z.string().regex(/^(wss?|https?):\/\//),
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
  instances: z.number().int().nonnegative(),
});

/** A placement (`PlacementRecord`). */
export const PlacementSchema = z.strictObject({
  instance_id: z.string().min(1),
  node_id: NodeId,
  order_id: z.string().regex(/^o-[0-9a-f]{16}$/),
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
  reschedules: z.int().nonnegative().optional(),
});

/** An alert (`heddle alerts`): a lost instance the controller did not move. */
export const AlertSchema = z.strictObject({
  alert_id: z.string().regex(/^al-[0-9a-f]{16}$/),
  instance_id: z.string().min(1),
  node_id: NodeId,
  order_id: z.string().min(1),
  reason: z.enum(['pinned', 'not_migratable', 'reschedule_limit', 'no_order']),
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
  parts: z.record(z.string(), z.number()).optional(),
  failures: z.array(z.looseObject({ constraint: z.string(), detail: z.string() })).optional(),
});

/** The engine's explanation of a decision (`Explanation` of `@heddle/placement`). */
export const ExplanationSchema = z.strictObject({
  workload: z.string(),
  outcome: z.enum(['placed', 'unplaceable', 'pin_refused']),
  node_id: z.string().optional(),
  summary: z.string(),
  nodes_evaluated: z.number().int().nonnegative(),
  nodes_total: z.number().int().nonnegative(),
  sampled: z.boolean(),
  rows: z.array(ExplainRowSchema),
});

/** `heddle place --json`: a `PlaceResult`. */
export const PlaceOutputSchema = z.strictObject({
  status: z.enum(['placed', 'dry_run', 'unsettled']),
  order_id: z.string().nullable(),
  decision_id: Hash.nullable(),
  instance: PlacementSchema.nullable(),
  attempts: z.array(
    z.strictObject({
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
    }),
  ),
  explanation: ExplanationSchema,
  replayed: z.literal(true).optional(),
});

/** `heddle node add|rm|pin --json`. */
export const NodeOutputSchema = z.strictObject({ node: NodeViewSchema });
/** `heddle node ls|refresh --json`. */
export const NodesOutputSchema = z.strictObject({ nodes: z.array(NodeViewSchema) });
/** `heddle ps --json`. */
export const PsOutputSchema = z.strictObject({ instances: z.array(PlacementSchema) });
/** `heddle status --json`: the placement and the host's own view of the instance. */
export const StatusOutputSchema = z.strictObject({ placement: PlacementSchema, node: z.unknown() });
/** `heddle logs --json` (with `--follow`, each line is one of these). */
export const LogsOutputSchema = z.strictObject({
  instance_id: z.string().min(1),
  lines: z.array(z.string()),
  truncated: z.boolean(),
});
/** `heddle start|unload --json`. */
export const PlacementOutputSchema = z.strictObject({ placement: PlacementSchema });
/** `heddle stop --json`: the placement and the node's stop evidence. */
export const StopOutputSchema = z.strictObject({ placement: PlacementSchema, evidence: z.unknown() });

/** Every failure with `--json`: one line on standard error. */
export const ErrorOutputSchema = z.strictObject({
  error: z.strictObject({
    code: z.string().regex(/^[a-z_]+$/),
    message: z.string().min(1),
    field: z.string().optional(),
    reasons: z.record(z.string(), z.string()).optional(),
    // A usage error from the parser: why (`unknown_flag`, ...) and the word as typed.
    reason: z
      .string()
      .regex(/^[a-z_]+$/)
      .optional(),
    token: z.string().optional(),
    // A file-system failure (disk_full, read_only_filesystem, permission_denied): the errno and path.
    errno: z.string().optional(),
    path: z.string().optional(),
  }),
});

/** The schema of each command's `--json` output, by command name. */
export const JSON_OUTPUTS: Readonly<Record<string, z.ZodType>> = {
  'node add': NodeOutputSchema,
  'node add-seed': NodeOutputSchema,
  'node ls': NodesOutputSchema,
  'node rm': NodeOutputSchema,
  'node pin': NodeOutputSchema,
  'node refresh': NodesOutputSchema,
  place: PlaceOutputSchema,
  ps: PsOutputSchema,
  alerts: z.strictObject({ alerts: z.array(AlertSchema) }),
  'alerts ack': z.strictObject({ alert: AlertSchema }),
  status: StatusOutputSchema,
  logs: LogsOutputSchema,
  start: PlacementOutputSchema,
  stop: StopOutputSchema,
  unload: PlacementOutputSchema,
};
