/**
 * The names of the workload events Heddle writes to its chains: who wrote an event (its source) and
 * what happened (its kind). The chain itself accepts any dotted lower-case identifier; these are the
 * ones Heddle's own components use (docs/chain.md lists their payloads).
 */

const CHAIN_SOURCE_VALUE = {
  /** The governance gate's decisions. */
  workload: 'workload',
  /** The controller's placement records. */
  placement: 'workload.placement',
  /** A host's placement records and refusals. */
  host: 'workload.host',
  /** A runtime adapter's lifecycle outcomes. */
  runtime: 'workload.runtime',
} as const;

/** The well-known event sources: who wrote an event. */
export const ChainSource: typeof CHAIN_SOURCE_VALUE = Object.freeze(CHAIN_SOURCE_VALUE);

const CHAIN_KIND_VALUE = {
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
  /** A declarative job's version was run, reverted to or stopped (payload: job, version, spec_hash, phase). */
  job: 'workload.job',
  artifactFetch: 'artifact.fetch',
  artifactPieceRejected: 'artifact.piece_rejected',
  artifactServe: 'artifact.serve',
} as const;

/** The well-known event kinds: what happened. */
export const ChainKind: typeof CHAIN_KIND_VALUE = Object.freeze(CHAIN_KIND_VALUE);

/** One of the well-known sources. */
export type KnownChainSource = (typeof ChainSource)[keyof typeof ChainSource];

/** One of the well-known kinds. */
export type KnownChainKind = (typeof ChainKind)[keyof typeof ChainKind];
