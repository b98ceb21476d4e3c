import { readFileSync } from 'node:fs';
import { typeExportNames } from '@heddle/envelope/testing';
import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@heddle/model exports (changes only on purpose: update this list when you mean to change the API)', () => {
  it('exports these values', () => {
    expect(Object.keys(api).sort()).toEqual([
      'COG_ARCHES',
      'COG_ROUTES',
      'ChainKind',
      'ChainSource',
      'InstanceLife',
      'LIFECYCLE_HISTORY',
      'LIFECYCLE_STATES',
      'LIFECYCLE_TRANSITIONS',
      'LifecycleError',
      'MAX_INTERVAL_SECS',
      'NETWORK_LEVELS',
      'NODE_TIERS',
      'REVOCATION_KINDS',
      'ROUTE_NETWORK',
      'RUN_MODE_TYPES',
      'RunModeSchema',
      'canTransition',
      'deriveInstanceId',
      'isCogArch',
      'isCogRoute',
      'isGone',
      'isNetworkLevel',
      'isNodeTier',
      'lifecyclePayload',
      'networkRank',
      'parseVariantName',
      'routeFitsArch',
      'routeNetwork',
      'tierRank',
      'variantName',
    ]);
  });

  it('exports these types', () => {
    expect(typeExportNames(readFileSync(new URL('./index.ts', import.meta.url), 'utf8'))).toEqual([
      'CogArch',
      'CogRoute',
      'KnownChainKind',
      'KnownChainSource',
      'LifecycleState',
      'LifecycleTransition',
      'NetworkLevel',
      'NodeTier',
      'RevocationCheck',
      'RevocationKind',
      'RevocationRefs',
      'RevokedSubject',
      'RunMode',
      'VariantName',
    ]);
  });
});
