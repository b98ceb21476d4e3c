// The `@heddle/control-plane/driver` entry: what a node driver (see `NodeDriver`) is written with.
// The plane's context and the pieces of its placing flow a driver's own flow reuses, so that every
// kind of node is decided, gated, chained and recorded the same way.

export { engineView } from './engine-view.js';
export { PlaneError, type PlaneErrorCode } from './errors.js';
export type { CheckedLiveness } from './health.js';
export type { DepartedEntry, HostListing, ListedInstance } from './host-listing.js';
export { lifeOf } from './host-listing.js';
export type { LiveEngineView, LiveViewSource, LiveViewStats } from './live-view.js';
export type { NodeBook } from './node-book.js';
export {
  HOST_NODE_KIND,
  type InstanceVerb,
  type NodeDriver,
  type PackageAttempt,
  type SettleOutcome,
} from './node-driver.js';
export type { NodeDrivers } from './node-drivers.js';
export { nodeKind } from './node-drivers.js';
export { orderRecord, type PlaceOrderInput } from './order.js';
export type { AttemptOutcome, AttemptOutcomeKind, PlaceHooks, PlaceResult } from './place.js';
export {
  type Attempt,
  type AttemptExtras,
  attemptPackage,
  type PlaceSend,
  type PlaceTransport,
} from './place-attempt.js';
export { chainAttempt, chainDecision, dispatchRanked, dryRun, unplaceable } from './place-common.js';
export { dryRunChecks, type PlaceCheck } from './place-gate.js';
export { chainChange, type StagedChange, stageNew } from './placement-life.js';
export { PLANE_CHAIN_SOURCE, type PlaneContext } from './plane-context.js';
export type { RevocationNodeResult } from './revocation-push.js';
export type {
  OrderRecord,
  OrderStorePin,
  PlacementRecord,
  SeedTargetInfo,
  StateStore,
  TargetRecord,
  UnsettledRecord,
} from './state-store.js';
