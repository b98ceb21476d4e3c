/** The body of `workload.place` / `workload.load` and the instance view they answer with (section 14.2). */

import {
  COG_ROUTES,
  type CogRoute,
  LIFECYCLE_STATES,
  type LifecycleState,
  type RunMode,
  RunModeSchema,
} from '@heddle/model';
import { z } from 'zod';
import {
  CogIdSchema,
  type ConfigValue,
  ConfigValuesSchema,
  CountSchema,
  Hash64Schema,
  InstanceIdSchema,
  NodeIdSchema,
  VariantSchema,
} from './body-parts.js';
import { RequestIdSchema } from './request-id.js';

/** The instance configuration a place or load carries. */
export type PlaceConfig = {
  /** How the instance runs. */
  readonly mode: RunMode;
  /** Config values by field name (checked by the adapter against the cog's schema). */
  readonly values: Readonly<Record<string, ConfigValue>>;
};

/** Body of `workload.place` and `workload.load`, as the host reads it (defaults applied). */
export type PlaceBody = {
  /** The cog id; the fetched package's id must equal it. */
  readonly name: string;
  /** BLAKE3 of the package envelope: what the host fetches from the controller. */
  readonly manifest_hash: string;
  /** The variant the controller chose (`<arch>-<route>`); its route selects the adapter. */
  readonly variant: string;
  /** Instance configuration. */
  readonly config: PlaceConfig;
  /** Start after loading (place only; a load never starts). */
  readonly start: boolean;
  /** The operator request this place serves, for the host's logs (absent: none given). */
  readonly request_id?: string;
};

/** Body of `workload.place` and `workload.load` as a controller may send it (`values`, `start` optional). */
export type PlaceBodyInput = {
  readonly name: string;
  readonly manifest_hash: string;
  readonly variant: string;
  readonly config: {
    readonly mode: RunMode;
    /** Default `{}` (absent or undefined). */
    readonly values?: Readonly<Record<string, ConfigValue>> | undefined;
  };
  /** Default false (absent or undefined). */
  readonly start?: boolean | undefined;
  /** Only to a host that advertises the `request_id` feature (an older host refuses the field). */
  readonly request_id?: string;
};

/** Schema of the place and load body: unknown fields refused, `values` default `{}`, `start` default false. */
export const PlaceBodySchema: z.ZodType<PlaceBody> = z.strictObject({
  name: CogIdSchema,
  manifest_hash: Hash64Schema,
  variant: VariantSchema,
  config: z.strictObject({ mode: RunModeSchema, values: ConfigValuesSchema.default({}) }),
  start: z.boolean().default(false),
  request_id: RequestIdSchema.exactOptional(),
});

const ADAPTER_STATES_VALUE = ['loaded', 'running', 'exited', 'stopped', 'failed', 'unknown'] as const;
/** The states a runtime adapter reports for an instance (`state` of an instance view). */
export const ADAPTER_STATES: typeof ADAPTER_STATES_VALUE = Object.freeze(ADAPTER_STATES_VALUE);
/** One of {@link ADAPTER_STATES}. */
export type AdapterState = (typeof ADAPTER_STATES)[number];

/** An adapter's status of an instance as it travels (only the fields the adapter set). */
export type AdapterStatus = {
  readonly state: AdapterState;
  /** Process id, when one runs. */
  readonly pid?: number;
  /** When the current or last run started (Unix ms). */
  readonly started_at_ms?: number;
  /** Exit code of the last run that ended; null when a signal ended it. */
  readonly last_exit_code?: number | null;
  /** Signal that ended the last run. */
  readonly last_signal?: string | null;
  /** Runs started since load. */
  readonly runs?: number;
  /** Free text for operators. */
  readonly detail?: string;
};

/** Schema of an {@link AdapterStatus}. */
export const AdapterStatusSchema: z.ZodType<AdapterStatus> = z.object({
  state: z.enum(ADAPTER_STATES),
  pid: CountSchema.exactOptional(),
  started_at_ms: CountSchema.exactOptional(),
  last_exit_code: z.int().nullable().exactOptional(),
  last_signal: z.string().nullable().exactOptional(),
  runs: CountSchema.exactOptional(),
  detail: z.string().exactOptional(),
});

/** A decision id, or `""` for an instance no decision placed. */
const DecisionRef = z.string().regex(/^(?:[0-9a-f]{64})?$/, 'expected 64 lower-case hex characters or ""');

/** One instance as a host reports it (`status`, and the core of a `place` answer). */
export type InstanceView = {
  readonly instance_id: string;
  /** The cog id and version. */
  readonly workload: string;
  readonly version: string;
  /** The route, and the runtime of its adapter. */
  readonly route: CogRoute;
  readonly runtime: string;
  readonly variant: string;
  readonly package_id: string;
  readonly manifest_hash: string;
  readonly mode: RunMode;
  /** The decision that placed it, and that of the last mutation of it. */
  readonly decision_id: string;
  readonly last_decision_id: string;
  /** The node id of the controller that placed it. */
  readonly requester: string;
  readonly placed_at_ms: number;
  readonly desired_running: boolean;
  /** Its lifecycle state on the host (docs/lifecycle.md). */
  readonly life: LifecycleState;
  /** Stopped by the host because no controller renewed its lease. */
  readonly lease_stopped: boolean;
  /** Supervisor restarts in the current budget window. */
  readonly restarts: number;
  /** Adopted again by a restart of the host process. */
  readonly adopted: boolean;
  /** The adapter's state, and its full status. */
  readonly state: AdapterState;
  readonly status: AdapterStatus;
};

/** The fields of an {@link InstanceView}, for schemas that extend it. */
const instanceViewShape = {
  instance_id: InstanceIdSchema,
  workload: CogIdSchema,
  version: z.string().min(1).max(64),
  route: z.enum(COG_ROUTES),
  runtime: z.string().min(1),
  variant: VariantSchema,
  package_id: Hash64Schema,
  manifest_hash: Hash64Schema,
  mode: RunModeSchema,
  decision_id: DecisionRef,
  last_decision_id: DecisionRef,
  requester: NodeIdSchema,
  placed_at_ms: CountSchema,
  desired_running: z.boolean(),
  // cast: the runtime exports the states as a readonly array; zod wants a non-empty tuple.
  life: z.enum(LIFECYCLE_STATES as [LifecycleState, ...LifecycleState[]]),
  lease_stopped: z.boolean(),
  restarts: CountSchema,
  adopted: z.boolean(),
  state: z.enum(ADAPTER_STATES),
  status: AdapterStatusSchema,
};

/** Schema of an {@link InstanceView} (fields it does not know are dropped, never refused). */
export const InstanceViewSchema: z.ZodType<InstanceView> = z.object(instanceViewShape);

/** What `workload.place` and `workload.load` answer: the instance, the node, and what this call did. */
export type PlaceAnswer = InstanceView & {
  /** The node id of the host. */
  readonly node: string;
  /** Whether this call started it. */
  readonly started: boolean;
  /** True when the instance was there already (a place is idempotent). */
  readonly already_placed: boolean;
};

/** Schema of a {@link PlaceAnswer}. */
export const PlaceAnswerSchema: z.ZodType<PlaceAnswer> = z.object({
  ...instanceViewShape,
  node: NodeIdSchema,
  started: z.boolean(),
  already_placed: z.boolean(),
});
