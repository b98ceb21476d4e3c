import { z } from 'zod';
import { parseOrThrow } from './parse.js';

/**
 * Phase B weights. The execution-tier part adds `native`, `dev_fallback` or `emulated`; every other
 * part is its weight times a factor in 0..1 (affinity: plus or minus per matching selector).
 */
export interface ScoringWeights {
  /** Added when the chosen variant runs natively. */
  readonly native: number;
  /** Added when the chosen variant is a portable fallback (WASI). */
  readonly dev_fallback: number;
  /** Added when the chosen variant runs emulated. */
  readonly emulated: number;
  /** Accelerator fit: a node's accelerators match the need (used when needed, left free when not). */
  readonly accelerator_fit: number;
  /** Measured performance (`perf.*` with `measured` provenance, `score` 0..1000). */
  readonly measured_performance: number;
  /** Low load after placement (1 - load). */
  readonly load: number;
  /** The node is one the workload ran on before. */
  readonly stickiness: number;
  /** Per prefer selector matched (minus per avoid selector matched). */
  readonly affinity: number;
  /** Spread: weight / (1 + instances already on the node's label value). */
  readonly spread: number;
}

/** The default weights (docs/placement.md, "The engine"). */
export const DEFAULT_WEIGHTS: ScoringWeights = Object.freeze({
  native: 100,
  dev_fallback: 40,
  emulated: 20,
  accelerator_fit: 10,
  measured_performance: 30,
  load: 10,
  stickiness: 15,
  affinity: 25,
  spread: 20,
});

const w = z.number().finite().min(0).max(1_000_000);

/** Schema of partial weights (unknown names refused, each finite and 0..1,000,000). */
export const WeightsSchema: z.ZodType<Partial<ScoringWeights>> = z.strictObject({
  native: w.exactOptional(),
  dev_fallback: w.exactOptional(),
  emulated: w.exactOptional(),
  accelerator_fit: w.exactOptional(),
  measured_performance: w.exactOptional(),
  load: w.exactOptional(),
  stickiness: w.exactOptional(),
  affinity: w.exactOptional(),
  spread: w.exactOptional(),
});

/** Parses partial weights from untrusted input and fills in the defaults; `invalid_weights` on junk. */
export function parseWeights(input: unknown): ScoringWeights {
  return {
    ...DEFAULT_WEIGHTS,
    ...parseOrThrow(WeightsSchema, input, 'invalid_weights', 'weights', 'weights'),
  };
}
