/**
 * The ordered vocabularies of the gate context and the eight governed actions (node tiers and network
 * levels are `@heddle/model`'s). Each order is listed from least to most trusted.
 */

/** Package trust, lowest first: a rule's `min_package_trust` admits that level and every later one. */
export const PACKAGE_TRUST_LEVELS = [
  'unsigned',
  'project_cert',
  'signed_unpinned',
  'operator_attested',
  'pinned_signer',
] as const;

/** How far a package's signature chain is trusted. */
export type PackageTrust = (typeof PACKAGE_TRUST_LEVELS)[number];

/** The eight governed actions. Any other `workload.*` action is denied (and recorded). */
export const ACTIONS = [
  'workload.install',
  'workload.place',
  'workload.load',
  'workload.start',
  'workload.stop',
  'workload.unload',
  'workload.migrate',
  'workload.revoke',
] as const;

/** A governed action. */
export type Action = (typeof ACTIONS)[number];

/** In a rule's `actions`, stands for all eight actions. */
export const ALL_ACTIONS = 'workload.*';

/** The actions the teardown waiver applies to. */
export const TEARDOWN_ACTIONS: readonly Action[] = ['workload.stop', 'workload.unload'];

/** Whether `value` is one of the eight governed actions. */
export function isAction(value: unknown): value is Action {
  return typeof value === 'string' && ACTIONS.some((a) => a === value);
}

/** Position of a package trust level in its order (0 = `unsigned`). */
export function trustRank(t: PackageTrust): number {
  return PACKAGE_TRUST_LEVELS.indexOf(t);
}

/** Resource costs are fractions in 0..1, held as integer basis points (0..10000) so that they can be chained. */
export const COST_SCALE = 10_000;

/** Converts a resource cost in 0..1 to integer basis points (rounded to nearest). */
export function costToBasisPoints(cost: number): number {
  return Math.round(cost * COST_SCALE);
}
