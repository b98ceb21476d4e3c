export type { KnownChainKind, KnownChainSource } from './chain-event.js';
export { ChainKind, ChainSource } from './chain-event.js';
export { deriveInstanceId } from './instance-id.js';
export type { LifecycleState, LifecycleTransition } from './lifecycle.js';
export {
  canTransition,
  InstanceLife,
  isGone,
  LIFECYCLE_HISTORY,
  LIFECYCLE_STATES,
  LIFECYCLE_TRANSITIONS,
  LifecycleError,
  lifecyclePayload,
} from './lifecycle.js';
export type { RevocationCheck, RevocationKind, RevocationRefs, RevokedSubject } from './revocation-ref.js';
export { REVOCATION_KINDS } from './revocation-ref.js';
export type { CogArch, CogRoute, VariantName } from './route.js';
export {
  COG_ARCHES,
  COG_ROUTES,
  isCogArch,
  isCogRoute,
  parseVariantName,
  ROUTE_NETWORK,
  routeFitsArch,
  routeNetwork,
  variantName,
} from './route.js';
export type { RunMode } from './run-mode.js';
export { MAX_INTERVAL_SECS, RUN_MODE_TYPES, RunModeSchema } from './run-mode.js';
export type { NetworkLevel, NodeTier } from './tier.js';
export { isNetworkLevel, isNodeTier, NETWORK_LEVELS, NODE_TIERS, networkRank, tierRank } from './tier.js';
