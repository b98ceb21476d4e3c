import { readFileSync } from 'node:fs';
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

/** The type-only export names written in `file`, sorted. */
function typeExports(file: URL): string[] {
  const names: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const raw of (m[2] ?? '').split(',')) {
      const part = raw.trim();
      if (part === '') continue;
      if (m[1] !== undefined)
        names.push(
          part
            .split(/\s+as\s+/)
            .pop()
            ?.trim() ?? part,
        );
      else if (part.startsWith('type '))
        names.push(
          part
            .slice(5)
            .split(/\s+as\s+/)
            .pop()
            ?.trim() ?? part,
        );
    }
  }
  return names.sort();
}

describe('@heddle/placement main entry exports', () => {
  it('value exports change only on purpose: update this list when you mean to change the API', () => {
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('type exports change only on purpose: update this list when you mean to change the API', () => {
    expect(typeExports(new URL('./index.ts', import.meta.url))).toEqual(TYPES);
  });
});
