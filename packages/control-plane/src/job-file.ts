import { blake3Hex, canonicalBytes } from '@heddle/envelope';
import {
  COG_ARCHES,
  COG_ROUTES,
  NODE_TIERS,
  type NodeTier,
  type RunMode,
  RunModeSchema,
} from '@heddle/model';
import { ConfigValuesSchema } from '@heddle/protocol';
import { z } from 'zod';
import { PlaneError } from './errors.js';
import { LabelName, LabelValue } from './order.js';

// The declarative job file (docs/jobs.md): what to run, how many, where, and how to roll out a new
// version. Parsed once at every boundary (the CLI reading the file, the operator API's body, a stored
// version read back) with one schema; every refusal is `job_invalid` naming the field.

/** A job's name: 1..63 of `a-z 0-9 . _ -`, starting with a letter or digit. */
export const JobName: z.ZodString = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,62}$/,
    'expected a job name: 1..63 of a-z 0-9 . _ - (starting with a-z or 0-9)',
  );

/** Most instances of one service job. */
export const MAX_JOB_COUNT = 1000;

/** Where a job's instances may go, besides what the package itself requires. */
export interface JobConstraints {
  /** Node labels a node must carry, each with exactly this value. */
  readonly labels?: Readonly<Record<string, string>> | undefined;
  /** The node's CPU architecture must be one of these (its `cpu.arch.<arch>` capability). */
  readonly arch?: readonly string[] | undefined;
  /** The node must offer one of these routes (`native`, `wasi`, `container`: its `runtime.<route>` capability). */
  readonly runtime?: readonly string[] | undefined;
  /** The node's operator tier must be at least this one (`discovered` < `paired` < `pinned`). */
  readonly tier?: NodeTier | undefined;
}

/** How a replacement is judged healthy during an update. */
export interface JobHealthCheck {
  /**
   * `running`: the instance is healthy once its placement has stayed `running` (no restart, not
   * `unhealthy`: the host's supervisor and readiness probe decide those) for `min_healthy_time_secs`.
   */
  readonly type: 'running';
  /** A replacement not healthy within this many seconds of being placed fails the update. */
  readonly deadline_secs: number;
}

/** How a new version of a job replaces the instances of the old one. */
export interface JobUpdate {
  readonly strategy: 'rolling';
  /** Replacements in flight (placed, not yet healthy) at most. */
  readonly max_parallel: number;
  readonly health_check: JobHealthCheck;
  /** How long a replacement must stay healthy before it counts (and an old instance is removed). */
  readonly min_healthy_time_secs: number;
  /** A failed update reverts the job to its last healthy version (true) or stops, the job `failed` (false). */
  readonly auto_revert: boolean;
}

/** A job file, parsed (defaults filled in). */
export interface JobSpec {
  readonly name: string;
  /** `service`: `count` instances; `system`: one instance on every eligible node. */
  readonly type: 'service' | 'system';
  /** A package directory on the controller's machine (as `heddle place` takes it). */
  readonly package?: string | undefined;
  /** Or a package the controller already holds, by manifest hash. */
  readonly manifest_hash?: string | undefined;
  /** Run mode: `listener` (default) or `interval`; `once` is refused (a finished instance is not converged). */
  readonly mode: RunMode;
  readonly values: Readonly<Record<string, string | number | boolean | null>>;
  /** Instances of a service job (default 1); absent for a system job. */
  readonly count?: number | undefined;
  readonly constraints: JobConstraints;
  /** Spread the instances over the values of this node label. */
  readonly spread?: string | undefined;
  /** Emulated variants may be chosen (default false). */
  readonly allow_emulated: boolean;
  readonly update: JobUpdate;
}

const HealthCheckSchema = z.strictObject({
  type: z.literal('running').default('running'),
  deadline_secs: z.int().min(1).max(86_400).default(300),
});

const UpdateSchema = z.strictObject({
  strategy: z.literal('rolling').default('rolling'),
  max_parallel: z.int().min(1).max(MAX_JOB_COUNT).default(1),
  health_check: HealthCheckSchema.default({ type: 'running', deadline_secs: 300 }),
  min_healthy_time_secs: z.int().min(0).max(86_400).default(10),
  auto_revert: z.boolean().default(false),
});

const ConstraintsSchema = z.strictObject({
  labels: z
    .record(LabelName, LabelValue)
    .refine((l) => Object.keys(l).length <= 64, 'at most 64 labels')
    .optional(),
  arch: z.array(z.enum(COG_ARCHES)).min(1).max(8).optional(),
  runtime: z.array(z.enum(COG_ROUTES)).min(1).max(3).optional(),
  tier: z.enum(NODE_TIERS).optional(),
});

/** Schema of a job file (unknown fields refused); see docs/jobs.md. */
export const JobSpecSchema: z.ZodType<JobSpec, unknown> = z
  .strictObject({
    name: JobName,
    type: z.enum(['service', 'system']).default('service'),
    package: z.string().min(1).max(4096).optional(),
    manifest_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters')
      .optional(),
    mode: RunModeSchema.refine((m) => m.type !== 'once', {
      message: 'a job runs listener or interval instances (a once instance finishes and is never converged)',
    }).default({ type: 'listener' }),
    values: ConfigValuesSchema.default({}),
    count: z.int().min(1).max(MAX_JOB_COUNT).optional(),
    constraints: ConstraintsSchema.default({}),
    spread: LabelName.optional(),
    allow_emulated: z.boolean().default(false),
    update: UpdateSchema.default({
      strategy: 'rolling',
      max_parallel: 1,
      health_check: { type: 'running', deadline_secs: 300 },
      min_healthy_time_secs: 10,
      auto_revert: false,
    }),
  })
  .superRefine((j, issue) => {
    if ((j.package === undefined) === (j.manifest_hash === undefined)) {
      issue.addIssue({
        code: 'custom',
        path: ['package'],
        message: 'give exactly one of package and manifest_hash',
      });
    }
    if (j.type === 'system' && j.count !== undefined) {
      issue.addIssue({
        code: 'custom',
        path: ['count'],
        message: 'a system job runs one instance on every eligible node: it takes no count',
      });
    }
  })
  .transform((j): JobSpec => (j.type === 'service' ? { ...j, count: j.count ?? 1 } : j));

/** One problem of a job file: the field (dotted path, `$` for the whole file) and what is wrong. */
export interface JobIssue {
  readonly field: string;
  readonly message: string;
}

/** Every problem of `input` as a job file (empty when it parses). */
export function jobIssues(input: unknown): JobIssue[] {
  const r = JobSpecSchema.safeParse(input);
  if (r.success) return [];
  return r.error.issues.map((i) => {
    const path = i.code === 'unrecognized_keys' ? [...i.path, i.keys[0] ?? ''] : i.path;
    return { field: path.length === 0 ? '$' : path.map(String).join('.'), message: i.message };
  });
}

/**
 * Parses a job file (already JSON-decoded); refuses with `PlaneError` `job_invalid` naming the first
 * field at fault (its `field`), every problem listed in the message.
 */
export function parseJobSpec(input: unknown): JobSpec {
  const r = JobSpecSchema.safeParse(input);
  if (r.success) return r.data;
  const issues = jobIssues(input);
  const first = issues[0] ?? { field: '$', message: 'invalid' };
  const text = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
  throw new PlaneError('job_invalid', `job file ${text}`, { field: first.field });
}

/** Parses the text of a job file (JSON); `job_invalid` (field `$`) when it is not JSON. */
export function parseJobText(text: string): JobSpec {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new PlaneError(
      'job_invalid',
      `job file is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        field: '$',
        cause,
      },
    );
  }
  return parseJobSpec(value);
}

/**
 * The hash of a job version (BLAKE3 of canonical JSON, hex): of its parsed spec (defaults filled in)
 * and the manifest hash of the package it runs. Two versions with the same hash run the same thing.
 */
export function jobSpecHash(spec: JobSpec, manifestHash: string): string {
  // A parsed spec is plain JSON; the round trip drops absent optional fields.
  const json: unknown = JSON.parse(JSON.stringify(spec));
  return blake3Hex(canonicalBytes({ spec: json, manifest_hash: manifestHash }));
}
