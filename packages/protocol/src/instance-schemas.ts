/** The body of the instance verbs and the answers of start, stop, unload, status and logs (section 14.3). */
import { z } from 'zod';
import {
  CountSchema,
  Hash64Schema,
  InstanceIdSchema,
  MAX_GRACE_MS,
  MAX_LOG_LINES,
  NodeIdSchema,
} from './body-parts.js';
import {
  type AdapterStatus,
  AdapterStatusSchema,
  type InstanceView,
  InstanceViewSchema,
} from './place-schemas.js';

/** Body of the instance verbs (`start`, `stop`, `unload`, `status`, `logs`). */
export type InstanceBody = {
  /** The instance; `status` without it lists every instance. */
  readonly instance_id?: string;
  /** `stop`: time between SIGTERM and the hard kill (default 5 s, at most 120 s). */
  readonly grace_ms?: number;
  /** `status` listing: also report instances taken down on purpose. */
  readonly include_departed?: boolean;
  /** `logs`: how many lines (default 100, at most 10,000). */
  readonly lines?: number;
};

/** Schema of {@link InstanceBody}: unknown fields refused. */
export const InstanceBodySchema: z.ZodType<InstanceBody> = z.strictObject({
  instance_id: InstanceIdSchema.exactOptional(),
  grace_ms: z.int().min(0).max(MAX_GRACE_MS).exactOptional(),
  include_departed: z.boolean().exactOptional(),
  lines: z.int().min(1).max(MAX_LOG_LINES).exactOptional(),
});

/** What `workload.start` answers. */
export type StartAnswer = { readonly instance_id: string; readonly status: AdapterStatus };

/** Schema of a {@link StartAnswer}. */
export const StartAnswerSchema: z.ZodType<StartAnswer> = z.object({
  instance_id: InstanceIdSchema,
  status: AdapterStatusSchema,
});

/** What a stopped run left behind, as it travels (each stream cut to its last 32 Ki characters). */
export type EvidenceView = {
  readonly instance_id: string;
  /** The argv (program first), or the console command. */
  readonly args: string[];
  /** Exit code; null when a signal ended it or it never started. */
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly started_at_ms: number | null;
  readonly ended_at_ms: number | null;
  /** True when the stop escalated to a hard kill. */
  readonly killed: boolean;
  readonly stdout: string;
  /** Bytes dropped from the front of `stdout`. */
  readonly stdout_truncated_bytes: number;
  readonly stderr: string;
  readonly stderr_truncated_bytes: number;
  /** Why a run ended abnormally, when the adapter knows. */
  readonly notes: string[];
};

/** Schema of an {@link EvidenceView}. */
export const EvidenceViewSchema: z.ZodType<EvidenceView> = z.object({
  instance_id: z.string(),
  args: z.array(z.string()),
  exit_code: z.int().nullable(),
  signal: z.string().nullable(),
  started_at_ms: CountSchema.nullable(),
  ended_at_ms: CountSchema.nullable(),
  killed: z.boolean(),
  stdout: z.string(),
  stdout_truncated_bytes: CountSchema,
  stderr: z.string(),
  stderr_truncated_bytes: CountSchema,
  notes: z.array(z.string()),
});

/** What `workload.stop` answers. */
export type StopAnswer = {
  readonly instance_id: string;
  readonly evidence: EvidenceView;
  readonly status: AdapterStatus;
};

/** Schema of a {@link StopAnswer}. */
export const StopAnswerSchema: z.ZodType<StopAnswer> = z.object({
  instance_id: InstanceIdSchema,
  evidence: EvidenceViewSchema,
  status: AdapterStatusSchema,
});

/** What `workload.unload` answers. */
export type UnloadAnswer = { readonly instance_id: string; readonly unloaded: true };

/** Schema of an {@link UnloadAnswer}. */
export const UnloadAnswerSchema: z.ZodType<UnloadAnswer> = z.object({
  instance_id: InstanceIdSchema,
  unloaded: z.literal(true),
});

/** What `workload.logs` answers: the newest lines that fit in 160 KiB. */
export type LogsAnswer = {
  readonly instance_id: string;
  readonly lines: string[];
  /** True when older lines were left out. */
  readonly truncated: boolean;
};

/** Schema of a {@link LogsAnswer}. */
export const LogsAnswerSchema: z.ZodType<LogsAnswer> = z.object({
  instance_id: InstanceIdSchema,
  lines: z.array(z.string()),
  truncated: z.boolean(),
});

/** What `workload.status` with an `instance_id` answers. */
export type InstanceStatusAnswer = { readonly instance: InstanceView };

/** Schema of an {@link InstanceStatusAnswer}. */
export const InstanceStatusAnswerSchema: z.ZodType<InstanceStatusAnswer> = z.object({
  instance: InstanceViewSchema,
});

const DEPARTURE_REASONS_VALUE = ['unloaded', 'revoked', 'lost'] as const;
/** Why an instance departed: taken down on purpose, or not adopted again after a restart (`lost`). */
export const DEPARTURE_REASONS: typeof DEPARTURE_REASONS_VALUE = Object.freeze(DEPARTURE_REASONS_VALUE);
/** One of {@link DEPARTURE_REASONS}. */
export type DepartureReason = (typeof DEPARTURE_REASONS)[number];

/** An instance that departed, as a listing reports it. */
export type DepartedInstance = {
  readonly instance_id: string;
  readonly reason: DepartureReason;
  /** When it departed (Unix ms). */
  readonly at_ms: number;
  /** The decision id of the request that took it down, when one did. */
  readonly decision_id: string | null;
};

/** A place or load the host is still working on. */
export type InFlightDecision = {
  readonly decision_id: string;
  /** `workload.place` or `workload.load`. */
  readonly method: string;
  /** When the host accepted it (Unix ms). */
  readonly since_ms: number;
};

/** What `workload.status` without an `instance_id` answers: the host's listing. */
export type HostListingAnswer = {
  /** The node id of the host. */
  readonly node: string;
  readonly instances: InstanceView[];
  readonly in_flight: InFlightDecision[];
  /** With `include_departed`: the last 256 departed instances, oldest first. */
  readonly departed?: DepartedInstance[];
};

/** Schema of a {@link HostListingAnswer}. */
export const HostListingAnswerSchema: z.ZodType<HostListingAnswer> = z.object({
  node: NodeIdSchema,
  instances: z.array(InstanceViewSchema),
  in_flight: z.array(
    z.object({ decision_id: Hash64Schema, method: z.string().min(1).max(128), since_ms: CountSchema }),
  ),
  departed: z
    .array(
      z.object({
        instance_id: InstanceIdSchema,
        reason: z.enum(DEPARTURE_REASONS),
        at_ms: CountSchema,
        decision_id: Hash64Schema.nullable(),
      }),
    )
    .exactOptional(),
});

/** What `workload.status` answers: one instance, or the listing. */
export type StatusAnswer = InstanceStatusAnswer | HostListingAnswer;

/** Schema of a {@link StatusAnswer}: one instance (`instance`) or a listing (`instances`). */
export const StatusAnswerSchema: z.ZodType<StatusAnswer> = z.union([
  InstanceStatusAnswerSchema,
  HostListingAnswerSchema,
]);

/** True when a status answer is the listing (the request named no instance). */
export function isListing(answer: StatusAnswer): answer is HostListingAnswer {
  return 'instances' in answer;
}
