import { NODE_TIERS } from '@heddle/model';
import { RevocationListFileSchema } from '@heddle/package';
import { SignedNodeFactsSchema } from '@heddle/placement';
import { z } from 'zod';
import { JobSpecSchema } from './job-file.js';
import {
  type AlertRecord,
  type HeldRevocationList,
  type IdempotencyRecord,
  type JobInstanceRecord,
  type JobRecord,
  type JobVersionRecord,
  type NodeMetaRecord,
  type OrderRecord,
  PLACEMENT_STATES,
  type PlaceClaimRecord,
  type PlacementRecord,
  type RescheduleRecord,
  type RevocationAckRecord,
  type TargetRecord,
  type UnsettledRecord,
} from './state-store.js';

// The record types as SQLite tables: every row read back (and every row written) is validated with
// these schemas.

const ms = z.int().nonnegative();
const strings = z.array(z.string());

const TargetSchema: z.ZodType<TargetRecord> = z.object({
  node_id: z.string().min(1),
  url: z.string(),
  public_key: z.string(),
  key_source: z.enum(['tofu', 'pinned']),
  tier: z.enum(NODE_TIERS).nullable(),
  assigned_tier: z.enum(NODE_TIERS),
  pending_key: z.string().nullable(),
  routes: strings,
  software: z
    .object({ name: z.string(), version: z.string() })
    .nullish()
    .transform((v) => v ?? undefined),
  facts: SignedNodeFactsSchema.nullable(),
  learned_at_ms: ms,
  last_seen_ms: ms.nullable(),
  unreachable_since_ms: ms.nullable(),
  last_error: z.string().nullable(),
  seed: z
    .object({ spki: z.string(), token_file: z.string(), allow_plain_http: z.boolean() })
    .nullish()
    .transform((v) => v ?? undefined),
  lease_ms: z
    .int()
    .positive()
    .nullish()
    .transform((v) => v ?? undefined),
  kind: z
    .string()
    .nullish()
    .transform((v) => v ?? undefined),
});

const OrderSchema: z.ZodType<OrderRecord> = z.object({
  order_id: z.string().min(1),
  workload: z.string(),
  version: z.string(),
  manifest_hash: z.string(),
  package_id: z.string(),
  mode: z.union([
    z.strictObject({ type: z.enum(['once', 'listener']) }),
    z.strictObject({ type: z.literal('interval'), secs: z.number().positive() }),
  ]),
  values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  start: z.boolean(),
  node: z.string().nullable(),
  prefer: strings,
  avoid: strings,
  allow_emulated: z.boolean(),
  migratable: z.boolean(),
  created_at_ms: ms,
  store_pin: z
    .object({
      id: z.string(),
      version: z.string(),
      sha256: z.string().optional(),
      console_commands: strings,
    })
    .nullish()
    .transform((v) => v ?? undefined),
  constraints: z
    .array(z.object({ label: z.string(), value: z.string() }))
    .nullish()
    .transform((v) => v ?? undefined),
  package_facts: z
    .object({
      signer_keys: strings,
      artifact_hashes: strings,
      ram_mb: z.number().nonnegative(),
      cpu_pct: z.number().nonnegative(),
    })
    .nullish()
    .transform((v) => v ?? undefined),
  spread: z
    .string()
    .nullish()
    .transform((v) => v ?? undefined),
});

const NodeMetaSchema: z.ZodType<NodeMetaRecord> = z.object({
  node_id: z.string().min(1),
  cordoned: z.boolean(),
  labels: z.record(z.string(), z.string()),
  updated_at_ms: ms,
});

/** A placement's or decision's resource (MB or percent); absent (null in the row) when not known. */
const resource = z
  .int()
  .nonnegative()
  .nullish()
  .transform((v) => v ?? undefined);

const PlacementSchema: z.ZodType<PlacementRecord> = z.object({
  instance_id: z.string().min(1),
  node_id: z.string(),
  order_id: z.string(),
  decision_id: z.string(),
  workload: z.string(),
  version: z.string(),
  variant: z.string(),
  runtime: z.string(),
  manifest_hash: z.string(),
  package_id: z.string(),
  signer_keys: strings,
  artifact_hashes: strings,
  state: z.enum(PLACEMENT_STATES),
  desired_running: z.boolean(),
  placed_at_ms: ms,
  updated_at_ms: ms,
  replaces: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  reschedules: z
    .int()
    .nonnegative()
    .nullish()
    .transform((v) => v ?? 0),
  ram_mb: resource,
  cpu_pct: resource,
});

const RescheduleSchema: z.ZodType<RescheduleRecord> = z.object({
  instance_id: z.string().min(1),
  order_id: z.string(),
  node_id: z.string(),
  avoid: strings,
  reschedules: z.int().positive(),
  attempts: z.int().nonnegative(),
  next_at_ms: ms,
  since_ms: ms,
  decision_id: z.string().nullable(),
  last_error: z.string().nullable(),
});

const AlertSchema: z.ZodType<AlertRecord> = z.object({
  alert_id: z.string().min(1),
  instance_id: z.string(),
  node_id: z.string(),
  order_id: z.string(),
  reason: z.enum(['pinned', 'not_migratable', 'reschedule_limit', 'no_order', 'clock_skew']),
  detail: z.string(),
  raised_at_ms: ms,
  acked_at_ms: ms.nullable(),
});

const RevocationAckSchema: z.ZodType<RevocationAckRecord> = z.object({
  node_id: z.string().min(1),
  generation: z.int().nonnegative(),
  acked_at_ms: ms.nullable(),
  last_error: z.string().nullable(),
});

const HeldRevocationListSchema: z.ZodType<HeldRevocationList> = z.object({
  name: z.string().min(1),
  generation: z.int().nonnegative(),
  list: RevocationListFileSchema,
  stored_at_ms: ms,
});

const UnsettledSchema: z.ZodType<UnsettledRecord> = z.object({
  decision_id: z.string().min(1),
  order_id: z.string(),
  node_id: z.string(),
  expected_instance_id: z.string().nullable(),
  variant: z.string(),
  since_ms: ms,
  attempts: z.int().nonnegative(),
  last_error: z.string(),
  ram_mb: resource,
  cpu_pct: resource,
});

const PlaceClaimSchema: z.ZodType<PlaceClaimRecord> = z.object({
  claim_id: z.string().min(1),
  node_id: z.string().min(1),
  order_id: z.string(),
  instance_id: z.string(),
  ram_mb: z.int().nonnegative(),
  cpu_pct: z.int().nonnegative(),
  claimed_by: z.string(),
  claimed_at_ms: ms,
});

const IdempotencySchema: z.ZodType<IdempotencyRecord> = z.object({
  key: z.string().min(1),
  fingerprint: z.string(),
  order_id: z.string(),
  result: z.string().nullable(),
  created_at_ms: ms,
  claimed_by: z.string().nullable(),
  claimed_at_ms: ms.nullable(),
});

const JobSchema: z.ZodType<JobRecord> = z.object({
  name: z.string().min(1),
  version: z.int().positive(),
  status: z.enum(['running', 'stopped']),
  rollout: z.enum(['rolling', 'complete', 'failed']),
  stable_version: z.int().positive().nullable(),
  blocked: z.string().nullable(),
  detail: z.string().nullable(),
  created_at_ms: ms,
  updated_at_ms: ms,
});

const JobVersionSchema: z.ZodType<JobVersionRecord> = z.object({
  job: z.string().min(1),
  version: z.int().positive(),
  spec: JobSpecSchema,
  spec_hash: z.string().regex(/^[0-9a-f]{64}$/),
  manifest_hash: z.string().regex(/^[0-9a-f]{64}$/),
  workload: z.string().min(1),
  workload_version: z.string().min(1),
  cause: z.enum(['run', 'revert', 'auto_revert']),
  reverted_from: z.int().positive().nullable(),
  actor: z.string().nullable(),
  created_at_ms: ms,
});

const JobInstanceSchema: z.ZodType<JobInstanceRecord> = z.object({
  instance_id: z.string().min(1),
  job: z.string().min(1),
  version: z.int().positive(),
  node_id: z.string(),
  order_id: z.string(),
  placed_at_ms: ms,
  healthy_at_ms: ms.nullable(),
});

/** How one record type maps to its table: key column, JSON columns, boolean (0/1) columns. */
export interface TableSpec<R> {
  readonly name: string;
  readonly key: string;
  readonly columns: readonly string[];
  readonly json: ReadonlySet<string>;
  readonly bools: ReadonlySet<string>;
  readonly orderBy: string;
  readonly schema: z.ZodType<R>;
}

function spec<R>(
  name: string,
  schema: z.ZodType<R>,
  json: string[],
  bools: string[],
  orderBy: string,
): TableSpec<R> {
  // cast: every table schema is a z.object (spec() is only called with them); its shape names the columns
  const shape = (schema as unknown as z.ZodObject).shape;
  const columns = Object.keys(shape);
  const key = columns[0] ?? '';
  return { name, key, columns, json: new Set(json), bools: new Set(bools), orderBy, schema };
}

/** The targets table. */
export const TARGETS: TableSpec<TargetRecord> = spec(
  'targets',
  TargetSchema,
  ['routes', 'software', 'facts', 'seed'],
  [],
  'node_id',
);
/** The orders table. */
export const ORDERS: TableSpec<OrderRecord> = spec(
  'orders',
  OrderSchema,
  ['mode', 'values', 'prefer', 'avoid', 'store_pin', 'constraints', 'package_facts'],
  ['start', 'allow_emulated', 'migratable'],
  'created_at_ms, order_id',
);
/** The placements table. */
export const PLACEMENTS: TableSpec<PlacementRecord> = spec(
  'placements',
  PlacementSchema,
  ['signer_keys', 'artifact_hashes'],
  ['desired_running'],
  'placed_at_ms, instance_id',
);
/** The pending reschedules table (schema v3). */
export const RESCHEDULES: TableSpec<RescheduleRecord> = spec(
  'reschedules',
  RescheduleSchema,
  ['avoid'],
  [],
  'since_ms, instance_id',
);
/** The alerts table (schema v3). */
export const ALERTS: TableSpec<AlertRecord> = spec('alerts', AlertSchema, [], [], 'raised_at_ms, alert_id');
/** The per-node acknowledged revocation generations (schema v3). */
export const REVOCATION_ACKS: TableSpec<RevocationAckRecord> = spec(
  'revocation_acks',
  RevocationAckSchema,
  [],
  [],
  'node_id',
);
/** The revocation list the controller distributes (schema v3). */
export const REVOCATION_LIST: TableSpec<HeldRevocationList> = spec(
  'revocation_list',
  HeldRevocationListSchema,
  ['list'],
  [],
  'name',
);
/** The unsettled decisions table. */
export const UNSETTLED: TableSpec<UnsettledRecord> = spec(
  'unsettled',
  UnsettledSchema,
  [],
  [],
  'since_ms, decision_id',
);
/** The idempotency keys of places (schema v4). */
export const IDEMPOTENCY_KEYS: TableSpec<IdempotencyRecord> = spec(
  'idempotency_keys',
  IdempotencySchema,
  [],
  [],
  'created_at_ms, key',
);
/** What the operator set on nodes: cordon and labels (schema v7). */
export const NODE_META: TableSpec<NodeMetaRecord> = spec(
  'node_meta',
  NodeMetaSchema,
  ['labels'],
  ['cordoned'],
  'node_id',
);
/** Declarative jobs (schema v8). */
export const JOBS: TableSpec<JobRecord> = spec('jobs', JobSchema, [], [], 'name');
/** The versions of jobs (schema v8): keyed by (job, version), written once. */
export const JOB_VERSIONS: TableSpec<JobVersionRecord> = spec(
  'job_versions',
  JobVersionSchema,
  ['spec'],
  [],
  'job, version',
);
/** Which instances belong to which job version (schema v8). */
export const JOB_INSTANCES: TableSpec<JobInstanceRecord> = spec(
  'job_instances',
  JobInstanceSchema,
  [],
  [],
  'placed_at_ms, instance_id',
);
/** The places claiming room on a node before they are sent (schema v10). */
export const PLACE_CLAIMS: TableSpec<PlaceClaimRecord> = spec(
  'place_claims',
  PlaceClaimSchema,
  [],
  [],
  'claimed_at_ms, claim_id',
);
