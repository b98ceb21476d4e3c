/**
 * The ordered vocabularies of where a workload runs: the tier an operator gives a node and the
 * network an instance is given. Each is listed from least to most trusted (or exposed).
 */

/** Operator-assigned node tiers, lowest first (a node never sets its own tier). */
export const NODE_TIERS: readonly ['discovered', 'paired', 'pinned'] = [
  'discovered',
  'paired',
  'pinned',
] as const;

/** The trust tier the operator gave a node. */
export type NodeTier = (typeof NODE_TIERS)[number];

/** Network exposure, least first: `none` (no sockets), `lan`, `egress` (the internet). */
export const NETWORK_LEVELS: readonly ['none', 'lan', 'egress'] = ['none', 'lan', 'egress'] as const;

/** The network an instance is given. */
export type NetworkLevel = (typeof NETWORK_LEVELS)[number];

const TIER_SET: ReadonlySet<unknown> = new Set(NODE_TIERS);
const NETWORK_SET: ReadonlySet<unknown> = new Set(NETWORK_LEVELS);

/** True when `value` is one of {@link NODE_TIERS}. */
export function isNodeTier(value: unknown): value is NodeTier {
  return TIER_SET.has(value);
}

/** True when `value` is one of {@link NETWORK_LEVELS}. */
export function isNetworkLevel(value: unknown): value is NetworkLevel {
  return NETWORK_SET.has(value);
}

/** Position of a node tier in its order: discovered 0, paired 1, pinned 2. */
export function tierRank(t: NodeTier): number {
  return NODE_TIERS.indexOf(t);
}

/** Position of a network level in its order: none 0, lan 1, egress 2. */
export function networkRank(n: NetworkLevel): number {
  return NETWORK_LEVELS.indexOf(n);
}
