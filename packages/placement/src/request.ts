import { NODE_TIERS, type NodeTier } from '@heddle/model';
import { z } from 'zod';
import { CapabilityIdSchema } from './capability.js';
import { parseOrThrow } from './parse.js';
import { type Requirement, RequirementSchema } from './requirement.js';
import { EXECUTION_TIERS, type ExecutionTier } from './vocabulary.js';

/** One way to run the workload: a named variant, how it runs, and what it needs of a node. */
export interface RequestVariant {
  /** Variant name (`aarch64-native`, `wasm32-wasi`, ...). */
  readonly name: string;
  /** Execution tier when this variant's requirements are met. */
  readonly execution: ExecutionTier;
  /** Every requirement must be met. */
  readonly requirements: readonly Requirement[];
  /**
   * Which alternative of the variant this is, when one variant is several request variants with the
   * same `name` (the requirement language has no OR): `linux` / `macos` for a native variant,
   * `native` / `emulated` for a container one. Shown in explanations as `name (alternative)`.
   */
  readonly alternative?: string;
}

/** How an explanation names a request variant: `name`, or `name (alternative)` for an alternative. */
export function variantLabel(v: Pick<RequestVariant, 'name' | 'alternative'>): string {
  return v.alternative === undefined ? v.name : `${v.name} (${v.alternative})`;
}

/** A node selector for affinity: a node id, or a label and its value. */
export type Selector = { readonly node_id: string } | { readonly label: string; readonly value: string };

/** Resources a workload takes on its node. */
export interface RequestResources {
  /** System memory (MB). */
  readonly memory_mb?: number;
  /** Accelerator memory (MB); from the same pool as system memory on a `mem.unified` node. */
  readonly accel_memory_mb?: number;
  /** CPU in percent of one core. */
  readonly cpu_pct?: number;
}

/** What to place. Everything but `workload` and `variants` is optional. */
export interface PlacementRequest {
  /** Workload name. */
  readonly workload: string;
  /** Package id (checked against revoked packages). */
  readonly package_id?: string;
  /** Variants; a node runs the best execution tier it can, first listed within a tier. */
  readonly variants: readonly RequestVariant[];
  /** Resources. */
  readonly resources?: RequestResources;
  /** Lowest operator trust tier acceptable (default `discovered`). */
  readonly min_tier?: NodeTier;
  /** Emulated variants may be chosen (default false). */
  readonly allow_emulation?: boolean;
  /** Place on this node or fail naming the constraints it fails. */
  readonly pin?: string;
  /** Score up nodes matching these. */
  readonly prefer?: readonly Selector[];
  /** Score down nodes matching these. */
  readonly avoid?: readonly Selector[];
  /** Spread replicas of this workload across the values of a node label. */
  readonly spread?: { readonly label: string };
  /** Node labels a node must carry, each with exactly its value (constraint `labels`). */
  readonly constraints?: readonly { readonly label: string; readonly value: string }[];
  /** Workloads that must not run on the same node (both ways: residents' exclusions apply too). */
  readonly exclude_coresident?: readonly string[];
  /** Nodes the workload ran on before (stickiness). */
  readonly previous_nodes?: readonly string[];
  /** `perf.*` capability to read measured performance from (default `perf.cpu`). */
  readonly perf_metric?: string;
}

const name = z.string().min(1).max(256);
const mb = z
  .int()
  .min(0)
  .max(1 << 30);

/** Schema of a {@link RequestVariant}. */
export const RequestVariantSchema: z.ZodType<RequestVariant> = z.strictObject({
  name,
  execution: z.enum(EXECUTION_TIERS),
  requirements: z.array(RequirementSchema).max(64),
  alternative: z.string().min(1).max(64).exactOptional(),
});

/** Schema of a {@link Selector}. */
export const SelectorSchema: z.ZodType<Selector> = z.union([
  z.strictObject({ node_id: name }),
  z.strictObject({ label: z.string().min(1).max(64), value: z.string().max(256) }),
]);

/** Schema of a {@link PlacementRequest}; unknown fields refused. */
export const PlacementRequestSchema: z.ZodType<PlacementRequest> = z.strictObject({
  workload: name,
  package_id: name.exactOptional(),
  variants: z.array(RequestVariantSchema).min(1).max(32),
  resources: z
    .strictObject({
      memory_mb: mb.exactOptional(),
      accel_memory_mb: mb.exactOptional(),
      cpu_pct: z
        .int()
        .min(0)
        .max(1 << 20)
        .exactOptional(),
    })
    .exactOptional(),
  min_tier: z.enum(NODE_TIERS).exactOptional(),
  allow_emulation: z.boolean().exactOptional(),
  pin: name.exactOptional(),
  prefer: z.array(SelectorSchema).max(64).exactOptional(),
  avoid: z.array(SelectorSchema).max(64).exactOptional(),
  spread: z.strictObject({ label: z.string().min(1).max(64) }).exactOptional(),
  constraints: z
    .array(z.strictObject({ label: z.string().min(1).max(64), value: z.string().max(256) }))
    .max(64)
    .exactOptional(),
  exclude_coresident: z.array(name).max(256).exactOptional(),
  previous_nodes: z.array(name).max(256).exactOptional(),
  perf_metric: CapabilityIdSchema.exactOptional(),
});

/** Parses a placement request from untrusted input; `invalid_request` naming the field on junk. */
export function parsePlacementRequest(input: unknown): PlacementRequest {
  return parseOrThrow(PlacementRequestSchema, input, 'invalid_request', 'request');
}
