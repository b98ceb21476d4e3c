import { readFileSync } from 'node:fs';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

/** The value exports of the main entry, sorted. */
const VALUES: readonly string[] = [
  'CAPABILITY_STATES',
  'CONSTRAINTS',
  'CapabilitySchema',
  'DEFAULT_MAX_CANDIDATES',
  'DEFAULT_WEIGHTS',
  'EXECUTION_TIERS',
  'LIVENESS_VALUES',
  'LivenessTracker',
  'MAX_FACTS_TTL_MS',
  'NodeFactsCache',
  'PREDICATE_OPS',
  'PROVENANCES',
  'PlacementError',
  'PlacementState',
  'PlacementView',
  'REQUIREMENT_REASONS',
  'SignedNodeFactsSchema',
  'checkRequirement',
  'cogPlacementRequest',
  'cogRequirements',
  'describeRequirement',
  'explain',
  'explainJson',
  'livenessAt',
  'normaliseArch',
  'parseCapabilities',
  'parseCapability',
  'parseNodeFacts',
  'parsePlacementRequest',
  'parseRequirement',
  'parseWeights',
  'place',
  'placeAndReserve',
  'requirementFailureText',
  'signNodeFacts',
  'verifyNodeFacts',
  'viewFromCache',
];

/** The names in the type-only export clauses (`export type { ... }`, `type X` inside `export { ... }`) of the main entry, sorted. */
const TYPES: readonly string[] = [
  'AttrScalar',
  'AttrValue',
  'CachedFacts',
  'Capability',
  'CapabilitySet',
  'CapabilityState',
  'CogRequestOptions',
  'CogRequirements',
  'ConstraintFailure',
  'ConstraintName',
  'Decision',
  'DecisionCommon',
  'EngineScratch',
  'ExecutionTier',
  'ExplainRow',
  'Explanation',
  'FactsCacheOptions',
  'GovernanceInput',
  'GovernanceVerdict',
  'InsertFactsOptions',
  'Liveness',
  'LivenessOptions',
  'NodeFacts',
  'NodeInput',
  'NodeRejection',
  'NodeUsage',
  'PinRefusedDecision',
  'PlaceOptions',
  'PlacedDecision',
  'PlacementErrorCode',
  'PlacementRequest',
  'Predicate',
  'PredicateOp',
  'Provenance',
  'RequestResources',
  'RequestVariant',
  'Requirement',
  'RequirementReason',
  'Reservation',
  'ReservationInput',
  'ScoreParts',
  'ScoredCandidate',
  'ScoringWeights',
  'Selector',
  'SignedNodeFacts',
  'UnplaceableDecision',
  'VerifiedNodeFacts',
  'ViewFromCacheOptions',
  'ViewNode',
];

describe('@heddle/placement main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual(TYPES);
  });
});
