/**
 * The closed vocabularies of placement: provenance, capability state, liveness and execution tier,
 * each with its order (node tiers are `@heddle/model`'s).
 */

/** How a capability is known, weakest first: claimed by the node, probed on the node, measured. */
export const PROVENANCES: readonly ['claimed', 'probed', 'measured'] = ['claimed', 'probed', 'measured'];
/** One of {@link PROVENANCES}. */
export type Provenance = (typeof PROVENANCES)[number];

/** State of a capability as the node reports it. */
export const CAPABILITY_STATES: readonly ['available', 'busy', 'reserved', 'degraded'] = [
  'available',
  'busy',
  'reserved',
  'degraded',
];
/** One of {@link CAPABILITY_STATES}. */
export type CapabilityState = (typeof CAPABILITY_STATES)[number];

/** Liveness of a node. Only `alive` nodes are placed on. */
export const LIVENESS_VALUES: readonly ['alive', 'suspect', 'dead', 'unknown'] = [
  'alive',
  'suspect',
  'dead',
  'unknown',
];
/** One of {@link LIVENESS_VALUES}. */
export type Liveness = (typeof LIVENESS_VALUES)[number];

/**
 * How a variant runs on a node, best first: `native` (the node's own architecture and runtime),
 * `dev_fallback` (a portable build such as WASI, used when no native build fits), `emulated`
 * (a foreign architecture under emulation; only when the request allows it).
 */
export const EXECUTION_TIERS: readonly ['native', 'dev_fallback', 'emulated'] = [
  'native',
  'dev_fallback',
  'emulated',
];
/** One of {@link EXECUTION_TIERS}. */
export type ExecutionTier = (typeof EXECUTION_TIERS)[number];

/** Rank of a provenance: claimed 0, probed 1, measured 2. */
export function provenanceRank(p: Provenance): number {
  return p === 'measured' ? 2 : p === 'probed' ? 1 : 0;
}

/** Rank of an execution tier: native 0 (best), dev_fallback 1, emulated 2. */
export function executionRank(t: ExecutionTier): number {
  return t === 'native' ? 0 : t === 'dev_fallback' ? 1 : 2;
}

/** The weaker of two provenances. */
export function minProvenance(a: Provenance, b: Provenance): Provenance {
  return provenanceRank(a) <= provenanceRank(b) ? a : b;
}

/** Longest capability id (characters). */
export const MAX_CAPABILITY_ID_LENGTH = 128;

/** A capability id: dotted, lower case, segments of `[a-z0-9][a-z0-9_-]*`. */
export const CAPABILITY_ID_RE: RegExp = /^[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9][a-z0-9_-]*)*$/;

/** True when `value` is a well-formed capability id. */
export function isCapabilityId(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= MAX_CAPABILITY_ID_LENGTH && CAPABILITY_ID_RE.test(value)
  );
}

/**
 * True when capability `id` falls under `prefix` on a segment boundary: `runtime.container` matches
 * `runtime.container` and `runtime.container.docker`, never `runtime.containerd`.
 */
export function idHasPrefix(id: string, prefix: string): boolean {
  if (id.length === prefix.length) return id === prefix;
  return id.length > prefix.length && id.charCodeAt(prefix.length) === 0x2e && id.startsWith(prefix);
}
