const CTL_METHODS_VALUE = [
  'workload.describe',
  'workload.place',
  'workload.load',
  'workload.start',
  'workload.stop',
  'workload.unload',
  'workload.status',
  'workload.logs',
  'workload.revoke',
] as const;
/**
 * The control methods a controller may call on a host. To add a method, append it to {@link CTL_METHODS} and, when it changes state, to
 * {@link MUTATING_METHODS}; every schema, type and check derives from these two lists.
 */
export const CTL_METHODS: typeof CTL_METHODS_VALUE = Object.freeze(CTL_METHODS_VALUE);

/** One control method name, such as `workload.place`. */
export type CtlMethod = (typeof CTL_METHODS)[number];

/** The methods that change a host's state. Each must carry a `decision_id` (the chain hash of the decision). */
export const MUTATING_METHODS: readonly CtlMethod[] = Object.freeze([
  'workload.place',
  'workload.load',
  'workload.start',
  'workload.stop',
  'workload.unload',
  'workload.revoke',
] satisfies CtlMethod[]);

/** The one method that may be addressed to any node (target `"*"`): learning who a node is. */
export const DESCRIBE_METHOD: CtlMethod = 'workload.describe';

/** The target that addresses whichever node answers; accepted only with {@link DESCRIBE_METHOD}. */
export const ANY_TARGET = '*';

const KNOWN: ReadonlySet<string> = new Set<string>(CTL_METHODS);
const MUTATING: ReadonlySet<string> = new Set<string>(MUTATING_METHODS);

/** True when `value` is one of {@link CTL_METHODS}. */
export function isCtlMethod(value: unknown): value is CtlMethod {
  return typeof value === 'string' && KNOWN.has(value);
}

/**
 * True when `method` changes a host's state (place, load, start, stop, unload, revoke). A request for such a
 * method without a `decision_id` is refused with `invalid_request`; a lost answer to one is
 * Indeterminate, never simply retried elsewhere. False for unknown strings.
 */
export function mutates(method: string): boolean {
  return MUTATING.has(method);
}
