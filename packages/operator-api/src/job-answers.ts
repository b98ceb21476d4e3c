/**
 * The job routes' bodies and answers (docs/operator-api.md, "Jobs"; the job file is docs/jobs.md).
 * A job file body is taken as any JSON object here and parsed by the handler with the job schema, so
 * that a bad file is refused with `job_invalid` naming the field, as the CLI refuses it.
 */
import type { PlacementState } from '@heddle/control-plane';
import { type JobSpec, JobSpecSchema, PLACEMENT_STATES } from '@heddle/control-plane/contract';
import { z } from 'zod';
import type { ExplanationAnswer } from './answer-types.js';
import { ExplanationSchema } from './answers.js';

const NodeId = z.string().regex(/^[0-9a-f]{32}$/, 'expected a node id (32 lower-case hex characters)');
const Hash = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');
const ms = z.int().nonnegative();
const Version = z.int().min(1);

/** The body of `POST /v1/jobs` and `POST /v1/jobs/plan`: a job file (docs/jobs.md), `package` an absolute path on the controller machine. */
export type JobFileBody = Readonly<Record<string, unknown>>;

/** Schema of {@link JobFileBody}: a JSON object (the handler parses it as a job file). */
export const JobFileBodySchema: z.ZodType<JobFileBody> = z.record(z.string(), z.unknown());

/** The body of `POST /v1/jobs/<name>/revert`. */
export interface RevertJobBody {
  /** The version to go back to (1, 2, ...). */
  readonly version: number;
}

/** Schema of {@link RevertJobBody}. */
export const RevertJobBodySchema: z.ZodType<RevertJobBody> = z.strictObject({
  version: Version.max(2 ** 31),
});

/** One instance of a job (`JobInstanceView`). */
export interface JobInstanceAnswer {
  readonly instance_id: string;
  readonly node_id: string;
  readonly version: number;
  readonly state: PlacementState | 'unknown';
  readonly healthy: boolean;
}

/** A job as it stands (`JobStatusView`). */
export interface JobStatusAnswer {
  readonly name: string;
  readonly type: 'service' | 'system';
  readonly status: 'running' | 'stopped';
  readonly version: number;
  readonly rollout: 'rolling' | 'complete' | 'failed';
  readonly stable_version: number | null;
  readonly blocked: string | null;
  readonly detail: string | null;
  readonly workload: string;
  readonly workload_version: string;
  readonly spec_hash: string;
  readonly desired: number;
  readonly healthy: number;
  readonly instances: readonly JobInstanceAnswer[];
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/** Schema of {@link JobStatusAnswer}. */
export const JobStatusSchema: z.ZodType<JobStatusAnswer> = z.strictObject({
  name: z.string().min(1),
  type: z.enum(['service', 'system']),
  status: z.enum(['running', 'stopped']),
  version: Version,
  rollout: z.enum(['rolling', 'complete', 'failed']),
  stable_version: Version.nullable(),
  blocked: z.string().nullable(),
  detail: z.string().nullable(),
  workload: z.string(),
  workload_version: z.string(),
  spec_hash: Hash,
  desired: z.int().nonnegative(),
  healthy: z.int().nonnegative(),
  instances: z.array(
    z.strictObject({
      instance_id: z.string().min(1),
      node_id: NodeId,
      version: Version,
      state: z.enum([...PLACEMENT_STATES, 'unknown']),
      healthy: z.boolean(),
    }),
  ),
  created_at_ms: ms,
  updated_at_ms: ms,
});

/** The answer of `POST /v1/jobs` and `POST /v1/jobs/<name>/revert` (`JobRunView`). */
export interface JobRunAnswer {
  /** False when the file is what already runs (no new version). */
  readonly changed: boolean;
  readonly job: JobStatusAnswer;
}

/** Schema of {@link JobRunAnswer}. */
export const JobRunSchema: z.ZodType<JobRunAnswer> = z.strictObject({
  changed: z.boolean(),
  job: JobStatusSchema,
});

/** One version of a job (`JobVersionView`). */
export interface JobVersionAnswer {
  readonly version: number;
  readonly cause: 'run' | 'revert' | 'auto_revert';
  readonly reverted_from: number | null;
  readonly actor: string | null;
  readonly spec_hash: string;
  readonly manifest_hash: string;
  readonly workload: string;
  readonly workload_version: string;
  readonly created_at_ms: number;
  readonly current: boolean;
  readonly spec: JobSpec;
}

/** Schema of {@link JobVersionAnswer}. */
export const JobVersionSchema: z.ZodType<JobVersionAnswer> = z.strictObject({
  version: Version,
  cause: z.enum(['run', 'revert', 'auto_revert']),
  reverted_from: Version.nullable(),
  actor: z.string().nullable(),
  spec_hash: Hash,
  manifest_hash: Hash,
  workload: z.string(),
  workload_version: z.string(),
  created_at_ms: ms,
  current: z.boolean(),
  spec: JobSpecSchema,
});

/** One change of a plan (`JobPlanChange`). */
export interface JobPlanChangeAnswer {
  readonly action: 'place' | 'replace' | 'remove' | 'adopt';
  readonly node_id: string | null;
  readonly instance_id: string | null;
  readonly version: number;
  readonly reason: string | null;
  readonly explanation: ExplanationAnswer | null;
}

/** The answer of `POST /v1/jobs/plan` (`JobPlanView`): what running the file would change. */
export interface JobPlanAnswer {
  readonly name: string;
  readonly current_version: number | null;
  readonly next_version: number | null;
  readonly spec_hash: string;
  readonly workload: string;
  readonly workload_version: string;
  readonly changes: readonly JobPlanChangeAnswer[];
  readonly nodes: readonly { node_id: string; eligible: boolean; reason: string | null }[];
}

/** Schema of {@link JobPlanAnswer}. */
export const JobPlanSchema: z.ZodType<JobPlanAnswer> = z.strictObject({
  name: z.string().min(1),
  current_version: Version.nullable(),
  next_version: Version.nullable(),
  spec_hash: Hash,
  workload: z.string(),
  workload_version: z.string(),
  changes: z.array(
    z.strictObject({
      action: z.enum(['place', 'replace', 'remove', 'adopt']),
      node_id: NodeId.nullable(),
      instance_id: z.string().nullable(),
      version: Version,
      reason: z.string().nullable(),
      explanation: ExplanationSchema.nullable(),
    }),
  ),
  nodes: z.array(z.strictObject({ node_id: NodeId, eligible: z.boolean(), reason: z.string().nullable() })),
});
