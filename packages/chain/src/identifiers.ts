import { ChainError } from './errors.js';

const ChainSource_VALUE = {
  /** The governance gate's decisions. */
  workload: 'workload',
  /** The controller's placement records. */
  placement: 'workload.placement',
  /** A host's placement records and refusals. */
  host: 'workload.host',
  /** A runtime adapter's lifecycle outcomes. */
  runtime: 'workload.runtime',
} as const;
/**
 * The well-known event sources: who wrote an event. Any other dotted lower-case identifier is accepted
 * too (see {@link isIdentifier}), so library users can add their own.
 */
export const ChainSource: typeof ChainSource_VALUE = Object.freeze(ChainSource_VALUE);

const ChainKind_VALUE = {
  install: 'workload.install',
  place: 'workload.place',
  load: 'workload.load',
  start: 'workload.start',
  stop: 'workload.stop',
  unload: 'workload.unload',
  migrate: 'workload.migrate',
  refuse: 'workload.refuse',
  revoke: 'workload.revoke',
  lifecycle: 'workload.lifecycle',
  artifactFetch: 'artifact.fetch',
  artifactPieceRejected: 'artifact.piece_rejected',
  artifactServe: 'artifact.serve',
} as const;
/**
 * The well-known event kinds: what happened. Any other dotted lower-case identifier is accepted too
 * (see {@link isIdentifier}).
 */
export const ChainKind: typeof ChainKind_VALUE = Object.freeze(ChainKind_VALUE);

/** One of the well-known sources. */
export type KnownChainSource = (typeof ChainSource)[keyof typeof ChainSource];
/** One of the well-known kinds. */
export type KnownChainKind = (typeof ChainKind)[keyof typeof ChainKind];

/** Longest accepted source or kind, in characters. */
export const MAX_IDENTIFIER_LENGTH = 128;

/**
 * A dotted lower-case identifier: segments of `[a-z][a-z0-9_]*` joined by single dots, 1 to
 * {@link MAX_IDENTIFIER_LENGTH} characters. Such a string never needs escaping in JSON.
 */
export const IDENTIFIER_PATTERN: RegExp = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;

/** True when `value` is a valid source or kind (see {@link IDENTIFIER_PATTERN}). */
export function isIdentifier(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_IDENTIFIER_LENGTH && IDENTIFIER_PATTERN.test(value);
}

/**
 * Throws `ChainError` with code `invalid_source` or `invalid_kind` (field `source` / `kind`) unless
 * `value` is a valid identifier.
 */
export function assertIdentifier(field: 'source' | 'kind', value: unknown): asserts value is string {
  if (isIdentifier(value)) return;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
  throw new ChainError(
    field === 'source' ? 'invalid_source' : 'invalid_kind',
    `${field} must be a dotted lower-case identifier such as "workload.start" (at most ${MAX_IDENTIFIER_LENGTH} characters), got ${shown}`,
    { field },
  );
}
