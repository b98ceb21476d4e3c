export type { AttrScalar, AttrValue, Capability } from './capability.js';
export { CapabilitySchema, parseCapabilities, parseCapability } from './capability.js';
export type { CogRequestOptions, CogRequirements } from './cog.js';
export { cogPlacementRequest, cogRequirements, normaliseArch } from './cog.js';
export type {
  ConstraintFailure,
  ConstraintName,
  Decision,
  DecisionCommon,
  GovernanceInput,
  GovernanceVerdict,
  NodeRejection,
  PinRefusedDecision,
  PlacedDecision,
  ScoredCandidate,
  ScoreParts,
  UnplaceableDecision,
} from './decision.js';
export { CONSTRAINTS } from './decision.js';
export type { PlaceOptions } from './engine.js';
export { DEFAULT_MAX_CANDIDATES, place, placeAndReserve } from './engine.js';
export type { PlacementErrorCode } from './errors.js';
export { PlacementError } from './errors.js';
export type { ExplainRow, Explanation } from './explain.js';
export { explain, explainJson } from './explain.js';
export type { NodeFacts, SignedNodeFacts, VerifiedNodeFacts } from './facts.js';
export {
  MAX_FACTS_TTL_MS,
  parseNodeFacts,
  SignedNodeFactsSchema,
  signNodeFacts,
  verifyNodeFacts,
} from './facts.js';
export type { CachedFacts, FactsCacheOptions, InsertFactsOptions } from './facts-cache.js';
export { NodeFactsCache } from './facts-cache.js';
export type { LivenessOptions } from './liveness.js';
export { LivenessTracker, livenessAt } from './liveness.js';
export type { PlacementRequest, RequestResources, RequestVariant, Selector } from './request.js';
export { parsePlacementRequest } from './request.js';
export type { CapabilitySet, Predicate, PredicateOp, Requirement, RequirementReason } from './requirement.js';
export {
  checkRequirement,
  describeRequirement,
  PREDICATE_OPS,
  parseRequirement,
  REQUIREMENT_REASONS,
} from './requirement.js';
export { requirementFailureText } from './requirement-words.js';
export type { NodeUsage, Reservation, ReservationInput } from './state.js';
export { PlacementState } from './state.js';
export type { EngineScratch, NodeInput, ViewNode } from './view.js';
export { PlacementView } from './view.js';
export type { ViewFromCacheOptions } from './view-cache.js';
export { viewFromCache } from './view-cache.js';
export type { CapabilityState, ExecutionTier, Liveness, Provenance } from './vocabulary.js';
export { CAPABILITY_STATES, EXECUTION_TIERS, LIVENESS_VALUES, PROVENANCES } from './vocabulary.js';
export type { ScoringWeights } from './weights.js';
export { DEFAULT_WEIGHTS, parseWeights } from './weights.js';
